"""The one piece of packaging pyproject.toml cannot say; everything else is there.

The app's files (examples, lessons, icons) live in the repository's top-level resources/
folder. The wheel ships each of its folders inside the package, as
autograd_viz/resources/<folder>/, beside the Python face src/autograd_viz/resources/:
`package_dir` maps every folder as a data-only package. pyproject.toml's package discovery
finds only what lies under src/, and cannot be combined with a list of more packages.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

RESOURCES = Path(__file__).resolve().parent / "resources"
DATA_PACKAGES = {
    f"autograd_viz.resources.{folder.name}": f"resources/{folder.name}"
    for folder in sorted(RESOURCES.iterdir())
    if folder.is_dir() and folder.name.isidentifier() and not folder.name.startswith("_")
}

setup(
    # As pyproject.toml's `packages.find` did (namespaces included), plus the data.
    packages=[*find_namespace_packages(where="src"), *DATA_PACKAGES],
    package_dir={"": "src", **DATA_PACKAGES},
    package_data={package: ["*"] for package in DATA_PACKAGES},
    exclude_package_data={package: ["*.pyc"] for package in DATA_PACKAGES},
)

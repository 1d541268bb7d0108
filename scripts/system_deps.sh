#!/usr/bin/env bash
# The system libraries Qt (PySide6's wheels) loads, and the tools `make` needs to build .venv:
# the one list that `make run`, `make test` and .ci/run share. A pip install brings Qt itself
# but not these, and without them `import PySide6.QtGui` fails with a loader error that names
# one library at a time.
#
#   scripts/system_deps.sh            # install what is missing (as root, or with sudo -n)
#   scripts/system_deps.sh --window   # also what a window on X11 (or Xvfb) needs
#   scripts/system_deps.sh --test     # also what `make test` needs: chromium (the replay
#                                     # page's browser test drives it headless)
#   scripts/system_deps.sh --check    # only report: name what is missing and the command
#
# Silent and fast (one `ldconfig -p`) when everything is present, since it runs on every
# `make run`. Exits 1 when something is still missing; outside Linux it checks nothing.
set -euo pipefail

check_only=0
window=0
tests=0
for arg in "$@"; do
    case "$arg" in
        --check) check_only=1 ;;
        --window) window=1 ;;
        --test) tests=1 ;;
        -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "system_deps: unknown option $arg (try --help)" >&2; exit 2 ;;
    esac
done
# An offscreen run (a server, CI, screenshots) never loads the xcb plugin.
[ "${QT_QPA_PLATFORM:-}" = offscreen ] && window=0
[ "$(uname -s)" = Linux ] || exit 0

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
FONT_DIRS=${SYSTEM_DEPS_FONT_DIRS:-/usr/share/fonts /usr/local/share/fonts}
BROWSER=${SYSTEM_DEPS_BROWSER:-chromium}  # the command Debian's chromium package installs

# Debian package, then the soname whose absence means it is missing (as Qt's loader asks).
BASE_LIBS=(
    libegl1 libEGL.so.1
    libgl1 libGL.so.1
    libfontconfig1 libfontconfig.so.1
    libxkbcommon0 libxkbcommon.so.0
    libglib2.0-0 libglib-2.0.so.0
    libdbus-1-3 libdbus-1.so.3
)
WINDOW_LIBS=(
    libxcb-cursor0 libxcb-cursor.so.0
    libxkbcommon-x11-0 libxkbcommon-x11.so.0
    libxcb-icccm4 libxcb-icccm.so.4
    libxcb-keysyms1 libxcb-keysyms.so.1
    libxcb-image0 libxcb-image.so.0
    libxcb-randr0 libxcb-randr.so.0
    libxcb-render-util0 libxcb-render-util.so.0
    libxcb-shape0 libxcb-shape.so.0
    libx11-xcb1 libX11-xcb.so.1
)

# ldconfig lives in /sbin, which a normal user's PATH on Debian leaves out.
ldconfig_cmd() {
    local c
    for c in "$(command -v ldconfig || true)" /sbin/ldconfig /usr/sbin/ldconfig; do
        [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return; }
    done
}

# The cache lists every architecture: only a library of this machine's counts.
arch_tag() {
    case "$(uname -m)" in
        x86_64) echo x86-64 ;;
        aarch64) echo AArch64 ;;
        *) echo "" ;;
    esac
}

missing_packages=()
missing_what=()
find_missing() {
    missing_packages=()
    missing_what=()
    local ldc cache tag i lib dir found dirs
    ldc=$(ldconfig_cmd)
    if [ -z "$ldc" ]; then
        echo "system_deps: no ldconfig here, so Qt's libraries cannot be checked" >&2
        cache=""
    else
        tag=$(arch_tag)
        # "\tlibEGL.so.1 (libc6,x86-64) => /lib/...": keep the sonames built for this machine.
        cache=$("$ldc" -p 2>/dev/null | awk -v tag="$tag" 'index($2, tag) { print $1 }' || true)
    fi
    local libs=("${BASE_LIBS[@]}")
    [ "$window" -eq 1 ] && libs+=("${WINDOW_LIBS[@]}")
    for ((i = 0; i < ${#libs[@]}; i += 2)); do
        lib=${libs[i + 1]}
        [ -z "$ldc" ] && continue
        grep -qxF "$lib" <<<"$cache" && continue
        found=0  # a library Qt would still find through LD_LIBRARY_PATH
        IFS=: read -r -a dirs <<<"${LD_LIBRARY_PATH:-}"
        for dir in "${dirs[@]}"; do
            [ -n "$dir" ] && [ -e "$dir/$lib" ] && found=1
        done
        [ "$found" -eq 1 ] && continue
        missing_packages+=("${libs[i]}")
        missing_what+=("$lib")
    done
    # Qt draws no text without a font; fontconfig finds none on a minimal image.
    local fonts=""
    for dir in $FONT_DIRS; do
        [ -d "$dir" ] || continue
        fonts=$(find "$dir" \( -name '*.ttf' -o -name '*.otf' -o -name '*.pcf.gz' \) \
            -print -quit 2>/dev/null)
        [ -n "$fonts" ] && break
    done
    if [ -z "$fonts" ]; then
        missing_packages+=(fonts-dejavu-core)
        missing_what+=("a font")
    fi
    # The replay page's test loads it in a real browser (tests/core/test_replay_page_browser.py).
    if [ "$tests" -eq 1 ] && ! command -v "$BROWSER" >/dev/null 2>&1; then
        missing_packages+=(chromium)
        missing_what+=(chromium)
    fi
    # The Makefile runs these before .venv exists; once it does, neither is needed.
    command -v make >/dev/null 2>&1 || { missing_packages+=(make); missing_what+=(make); }
    if [ ! -x "$VENV/bin/python" ]; then
        if ! command -v "$PYTHON" >/dev/null 2>&1; then
            missing_packages+=(python3 python3-venv)
            missing_what+=("$PYTHON")
        elif ! "$PYTHON" -c 'import ensurepip' >/dev/null 2>&1; then
            # Debian ships ensurepip in pythonX.Y-venv; without it `python3 -m venv` fails.
            missing_packages+=("$("$PYTHON" -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])')")
            missing_what+=("$PYTHON -m venv")
        fi
    fi
}

find_missing
[ "${#missing_packages[@]}" -eq 0 ] && {
    [ "$check_only" -eq 1 ] && echo "system_deps: nothing missing"
    exit 0
}

why="Qt and the set-up need ${missing_what[*]}"
install_line="apt-get install -y --no-install-recommends ${missing_packages[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "system_deps: $why: install them with your package manager" >&2
    echo "  (the Debian/Ubuntu packages: ${missing_packages[*]})" >&2
    exit 1
fi

sudo=""
can_install=0
if [ "$check_only" -eq 1 ]; then
    :  # report only: not even `sudo -n`, which some set-ups log
elif [ "$(id -u)" -eq 0 ]; then
    can_install=1
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    sudo="sudo"  # works without a password prompt, so `make` does not stop to ask
    can_install=1
fi
if [ "$can_install" -eq 0 ]; then
    prefix=""
    [ "$(id -u)" -eq 0 ] || prefix="sudo "
    echo "system_deps: missing ${missing_packages[*]} ($why). Run:" >&2
    echo "  ${prefix}apt-get update && ${prefix}$install_line" >&2
    exit 1
fi

echo "system_deps: installing ${missing_packages[*]} with ${sudo:+sudo }apt-get" \
    "($why; this happens once)" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo $install_line -qq >/dev/null
find_missing
if [ "${#missing_packages[@]}" -gt 0 ]; then
    echo "system_deps: still missing ${missing_what[*]} after apt-get install" >&2
    exit 1
fi

"""The drawn graph: which trace tensors and nodes become which boxes and edges, how modules
fold, and the layered DAG layout (networkx)."""

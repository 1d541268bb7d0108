"""Pure Python + torch + networkx: capture, the trace model, layout. No Qt here."""

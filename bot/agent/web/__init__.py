"""The web tools in a turn: definitions, budgets, stored blocks, cited pages; no telegram import."""

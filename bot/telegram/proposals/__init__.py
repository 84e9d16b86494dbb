"""Memory proposals in the chat: their question and buttons; imports no wiring."""

"""A reply's sources (memories cited, web pages): views and buttons; imports no wiring."""

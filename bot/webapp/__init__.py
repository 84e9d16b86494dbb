"""The Mini App: its HTTP API and static page, on the same services as the chat commands."""

"""The chat path: handlers, reading, albums, voice, drafts and delivery; imports no wiring."""

"""Files and voice notes: kinds, limits, cache, transcripts; imports no bot.agent nor telegram."""

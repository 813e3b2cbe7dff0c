"""The run loop (compiled) and what feeds it."""

"""The core's own plugins, registered through the same hooks as everyone else's."""

"""The on-disk index: a generation's files and header, publishing it atomically, the writer lock, where indexes live."""

"""The note's words, the rename-insensitive view, k-gram hashes and winnowing, and what a span of words is made of (its kind); imports nothing else of ours."""

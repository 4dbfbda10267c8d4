"""From a suggestion to verified, region-merged matches: the index reader, the matcher, merging indexes' answers, readers following CURRENT."""

"""What a match shows as: license categories, the team's decisions in .recitation.toml, attributions near a quote, the one verdict."""

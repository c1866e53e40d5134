"""Recipe data: loading and validating recipes/*.toml, features and their spellings, which recipe fits a tree."""

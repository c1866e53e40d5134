"""The documentation's reference pages, generated from the code: commands, recipe keys, environment, stages."""

"""Per-language extractors: each walks a tree-sitter tree and fills a FileBuilder."""

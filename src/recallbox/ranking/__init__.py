"""Pure ranking functions: BM25 and the hybrid fusion of the keyword and vector legs."""

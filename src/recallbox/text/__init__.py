"""Pure text functions: normalisation, CJK segmentation, token estimates."""

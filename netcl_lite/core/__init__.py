"""Device, tensors and kernel programs: the layer every op stands on."""

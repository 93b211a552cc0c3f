# The program from section 6 of the chapter document, unchanged except for
# the package name: netcl -> netcl_lite. Chapter 07 walks through it.
import numpy as np
from netcl_lite.text import BPETokenizer, ChatFormat
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor
import netcl_lite.autograd as ag

# 1. Byte-level BPE Tokenization
tok = BPETokenizer()
tok.train_from_iterator(["Hello world!", "Attention is all you need."])
tokens = tok.encode("Hello world!")
print("Token IDs:", tokens)
print("Reconstructed text:", tok.decode(tokens))

# 2. Multi-Head Attention on OpenCL Device
q = manager.default("auto").queue
from netcl_lite.nn.transformer import RotaryAttention

attn = RotaryAttention(
    queue=q,
    dim=256,
    n_heads=4,
    n_kv_heads=4,
    max_seq_len=512,
)

# Batch of 2 sequences, length 16, dimension 256
x_batch = Tensor.from_host(q, np.random.randn(2, 16, 256).astype(np.float32))

with ag.Tape() as tape:
    x_node = ag.tensor(x_batch)
    out = attn(x_node)

print(f"Attention output shape: {out.value.shape}")
assert out.value.shape == (2, 16, 256)

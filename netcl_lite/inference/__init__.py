"""Inference: forward-only paths that launch kernels on buffers they own.

Not ops: no autograd nodes, no ``record``, no numpy reference of their own
(each is checked against the ops it replaces, ``tests/nn/test_decode.py``).
Not modules: they hold no parameters, only copies or views of a model's.
The layer sits between the two: it imports core, autograd and functional,
and ``nn`` imports it (``tests/test_layers.py`` checks both).

- ``decode.py``: one launcher per kernel of ``kernels/decode.cl``;
- ``decoder.py``: ``FusedDecoder``, the decoding steps that drive them, on
  the weights of a decoder (``nn.FusedDecoder`` takes them from a
  ``DecoderLM``);
- ``decode_quant.py`` and ``quantized_decoder.py``: the same for a decoder
  whose matrices stay in GGUF blocks (``kernels/decode_quant.cl``,
  ``QuantizedDecoder``; ``nn.decode.QuantizedDecoder`` takes them from a
  ``DecoderLM`` read from a file), with a cache that grows with the text.
"""

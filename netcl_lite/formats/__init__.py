"""File formats that both the model side (``netcl_lite.nn``) and the text
side (``netcl_lite.text``) read.

A model file may hold the weights and the tokenizer together (GGUF), so
its reader sits below both: it imports only numpy and the format's own
package, never another layer of this library.

    gguf_reader.py   ``open_gguf(path)``: a GGUF file, parsed by the
                     ``gguf`` package, with errors that name the damaged
                     part (chapter 14)
"""

"""llama.cpp (llama-cpp-python) for the benchmarks and the outside check,
or None where it does not import (``tools/llama_cpp_wheel.py`` installs it).

On a CPU with AMX, llama.cpp repacks Q4_1 and Q8_0 weights for its AMX
kernels by default ("extra buffer types"). In a VM that does not grant the
AMX state, that crashed (SIGSEGV in the first eval), so the default model
parameters are patched to take the AVX-512 kernels instead.

>>> llama_cpp = import_llama_cpp()   # None without llama-cpp-python
>>> llama_cpp is None or hasattr(llama_cpp, "Llama")
True
"""


def import_llama_cpp():
    try:
        import llama_cpp
        import llama_cpp.llama as llama_module
    except ImportError:
        return None
    defaults = llama_cpp.llama_model_default_params

    def without_extra_buffers():
        params = defaults()
        params.use_extra_bufts = False
        return params

    llama_module.llama_cpp.llama_model_default_params = without_extra_buffers
    return llama_cpp

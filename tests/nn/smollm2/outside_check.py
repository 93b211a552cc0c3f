"""The check against an outside implementation, run by hand (not in CI):
transformers reads the same GGUF file, in float32, and its logits on the
named prompts (prompts.json) are compared with DecoderLM.from_gguf's; its
save_pretrained writes a real LlamaForCausalLM folder, and
DecoderLM.from_hf on that folder must give from_gguf's logits.

transformers needs torch, too heavy for the project's environment, so the
check runs in two steps, in two environments:

    # 1. where torch and transformers are installed (e.g. a scratch venv:
    #    pip install torch transformers gguf accelerate)
    python tests/nn/smollm2/outside_check.py transformers <gguf folder> <out>
    # 2. in the project's environment
    python tests/nn/smollm2/outside_check.py compare <gguf folder> <out>

llama.cpp (llama-cpp-python, which ``make bench`` installs) reads the same
file in the project's environment; its greedy tokens and first logits are
compared with ours on every named prompt:

    python tests/nn/smollm2/outside_check.py llama_cpp <gguf folder> -

llama.cpp multiplies Q4_1 blocks by activations it rounds to 8 bits (its
Q8_1 blocks), so its logits differ from a float32 forward pass by more
than ours do: where two tokens are nearly tied, its greedy text can take
the other one. The script prints the top five logits of both where the
texts part. ``llama_cpp_f32`` first writes the same weights, dequantised,
as an F32 GGUF file into <out> (540 MB): llama.cpp then multiplies float
by float, as we do, and near-ties no longer part the texts:

    python tests/nn/smollm2/outside_check.py llama_cpp_f32 <gguf folder> <out>
"""

import json
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).parent
FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPTS = json.loads((HERE / "prompts.json").read_text(encoding="utf-8"))
GREEDY = 24


def with_transformers(folder, out):
    import torch
    from transformers import AutoModelForCausalLM
    out.mkdir(parents=True, exist_ok=True)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=FILE,
                                                 dtype=torch.float32)
    model.eval()
    logits = {}
    with torch.no_grad():
        for name, p in PROMPTS.items():
            ids = torch.tensor([p["ids"]])
            logits[name] = model(ids).logits[0].numpy()
        prompt = torch.tensor([PROMPTS["chatml_capital"]["ids"]])
        greedy = model.generate(prompt, max_new_tokens=GREEDY, do_sample=False,
                                eos_token_id=None, pad_token_id=0)
    np.savez(out / "transformers_logits.npz", **logits)
    (out / "transformers_greedy.json").write_text(json.dumps(
        greedy[0, prompt.shape[1]:].tolist()))
    # a model read from GGUF refuses save_pretrained; the same float32
    # weights in a plain LlamaForCausalLM save as any checkpoint does
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = type(model)(config)
    plain.load_state_dict(model.state_dict())
    plain.save_pretrained(out / "hf")
    print("wrote", out)


def compare(folder, out):
    from netcl_lite.nn import DecoderLM
    theirs = np.load(out / "transformers_logits.npz")
    t = time.perf_counter()
    ours = DecoderLM.from_gguf(pathlib.Path(folder) / FILE)
    print(f"from_gguf: {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    hf = DecoderLM.from_hf(out / "hf")
    print(f"from_hf: {time.perf_counter() - t:.1f} s")
    for name, p in PROMPTS.items():
        ids = np.array([p["ids"]], np.int32)
        a = ours(ids).value.to_host()[0]
        b = hf(ids).value.to_host()[0]
        ref = theirs[name]
        print(f"{name} ({len(p['ids'])} tokens): max |logit| "
              f"{np.abs(ref).max():.2f}; from_gguf vs transformers "
              f"{np.abs(a - ref).max():.3g}; from_hf vs from_gguf "
              f"{np.abs(a - b).max():.3g}; from_hf vs transformers "
              f"{np.abs(b - ref).max():.3g}")
    prompt = PROMPTS["chatml_capital"]["ids"]
    mine = ours.generate(prompt, GREEDY, temperature=0.0, stop_ids=())
    want = json.loads((out / "transformers_greedy.json").read_text())
    print("greedy ids equal to transformers':", mine == want)
    print("hf greedy equal:", hf.generate(prompt, GREEDY, temperature=0.0,
                                          stop_ids=()) == want)
    print("hf stop ids:", hf.stop_ids, "gguf stop ids:", ours.stop_ids)


def write_f32(source, target):
    """The GGUF file ``source`` with every tensor dequantised to F32."""
    import gguf
    reader = gguf.GGUFReader(source)
    writer = gguf.GGUFWriter(target, arch="llama")
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        value = field.contents()
        if key == "general.file_type":
            value = 0                                       # all F32
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, kind, sub_type=sub)
    for t in reader.tensors:
        w = gguf.quants.dequantize(t.data, t.tensor_type)   # (rows, cols)
        writer.add_tensor(t.name, np.ascontiguousarray(w, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def with_llama_cpp_f32(folder, out):
    out.mkdir(parents=True, exist_ok=True)
    target = out / "SmolLM2-135M-Instruct.F32.gguf"
    if not target.exists():
        write_f32(pathlib.Path(folder) / FILE, target)
    with_llama_cpp(folder, out, llama_file=target)


def with_llama_cpp(folder, out, llama_file=None):
    sys.path.insert(0, str(HERE.parents[2] / "bench"))
    from llama_cpp_import import import_llama_cpp
    from netcl_lite.nn import pretrained
    llama_cpp = import_llama_cpp()        # its AMX repacking off
    llama_file = llama_file or pathlib.Path(folder) / FILE
    print("llama.cpp reads", pathlib.Path(llama_file).name)
    llm = llama_cpp.Llama(model_path=str(llama_file),
                          n_threads=2, n_ctx=1024, logits_all=True,
                          verbose=False)
    model, tok = pretrained("SmolLM2-135M-Instruct")
    for name, p in PROMPTS.items():
        ids = p["ids"]
        llm.reset()
        llm.eval(ids)
        theirs_logits = np.array(llm.scores[len(ids) - 1])      # (V,)
        mine_logits = model(np.array([ids], np.int32)).value.to_host()[0, -1]
        mine = model.generate(ids, GREEDY, temperature=0.0, stop_ids=())
        llm.reset()
        theirs = []
        for t in llm.generate(ids, temp=0.0, top_k=1, reset=True):
            theirs.append(int(t))
            if len(theirs) == GREEDY:
                break
        same = next((i for i, (a, b) in enumerate(zip(mine, theirs))
                     if a != b), GREEDY)
        print(f"{name} ({len(ids)} tokens): last position's max |logit "
              f"difference| {np.abs(mine_logits - theirs_logits).max():.3g} "
              f"(max |logit| {np.abs(mine_logits).max():.2f}); greedy "
              f"tokens equal for {same} of {GREEDY}")
        if same < GREEDY:
            print("  ours:     ", repr(tok.decode(mine)))
            print("  llama.cpp:", repr(tok.decode(theirs)))
            if same == 0:
                for who, lg in (("ours", mine_logits),
                                ("llama.cpp", theirs_logits)):
                    top = np.argsort(-lg)[:5]
                    print(f"  top five, {who}:", [(tok.decode([int(t)]),
                          round(float(lg[t]), 2)) for t in top])


if __name__ == "__main__":
    step, folder, out = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    {"transformers": with_transformers, "compare": compare,
     "llama_cpp": with_llama_cpp,
     "llama_cpp_f32": with_llama_cpp_f32}[step](folder, out)

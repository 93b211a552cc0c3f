"""Write prompts.json: the named prompts of tests/nn/test_smollm2.py as ids,
tokenized by transformers' own tokenizer for the SmolLM2 GGUF file (an
outside implementation; the course's tokenizer is tested on its own).

Run once, in an environment with transformers (and torch, which it needs):

    python tests/nn/smollm2/make_prompts.py <folder holding the .gguf file>
"""

import json
import pathlib
import sys

from transformers import AutoTokenizer

HERE = pathlib.Path(__file__).parent
REPO = HERE.parents[2]
FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def main(folder):
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=FILE)
    chat = [{"role": "user", "content": "What is the capital of France?"}]
    capital = tok.apply_chat_template(chat, add_generation_prompt=True,
                                      tokenize=False)
    # the opening of the course's Shakespeare, cut at a line end once it
    # passes 300 tokens
    lines, text = (REPO / "data" / "tinyshakespeare.txt").read_text(
        encoding="utf-8").splitlines(keepends=True), ""
    for line in lines:
        text += line
        if len(tok(text)["input_ids"]) > 300:
            break
    texts = {
        "chatml_capital": capital,
        "code": "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci "
                "number.\"\"\"\n    if n < 2:\n",
        "shakespeare_300": text,
    }
    prompts = {name: {"text": t, "ids": tok(t)["input_ids"]}
               for name, t in texts.items()}
    lines = [f" {json.dumps(name)}: {json.dumps(p)}" for name, p in
             prompts.items()]                 # one prompt a line
    (HERE / "prompts.json").write_text("{\n" + ",\n".join(lines) + "\n}\n",
                                       encoding="utf-8")
    for name, p in prompts.items():
        print(name, len(p["ids"]))


if __name__ == "__main__":
    main(sys.argv[1])

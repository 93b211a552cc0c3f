"""ChatFormat with a model's own chat template (chat_template.py).

SmolLM2's dialogs against transformers' `apply_chat_template(...,
tokenize=True)` (fixtures/smollm2_ids.json): the same ids on ordinary
content; on content that holds control strings, transformers (by default)
makes them control tokens and this library, on purpose, does not. Then the
template's environment, one feature at a time, and the guarantee on random
content.
"""

import gzip
import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netcl_lite.text import BPETokenizer, ChatFormat
from netcl_lite.text.chat_template import ChatTemplate

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
DIALOGS = json.loads((FIXTURES / "smollm2_ids.json").read_text(
    encoding="utf-8"))["dialogs"]
DEFAULT_SYSTEM = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
                  "trained by Hugging Face<|im_end|>\n")
CONTROL = {0, 1, 2}  # <|endoftext|>, <|im_start|>, <|im_end|>


def has_control_strings(dialog):
    return any("<|" in m["content"] for m in dialog["messages"])


@pytest.fixture(scope="module")
def smollm2_hf(tmp_path_factory):
    """SmolLM2's tokenizer from the files transformers writes for it."""
    folder = tmp_path_factory.mktemp("smollm2_hf")
    source = FIXTURES / "smollm2_tokenizer"
    for name in ("tokenizer_config.json", "chat_template.jinja"):
        (folder / name).write_bytes((source / name).read_bytes())
    (folder / "tokenizer.json").write_bytes(
        gzip.decompress((source / "tokenizer.json.gz").read_bytes()))
    return BPETokenizer.from_tokenizer_json(folder / "tokenizer.json")


@pytest.fixture(scope="module")
def smollm2_gguf(smollm2_path):
    return BPETokenizer.from_gguf(smollm2_path)


def check_against_transformers(tok, dialog, reference):
    chat = ChatFormat(tok)
    ours = chat.encode_dialog(dialog["messages"], dialog["add_generation_prompt"])
    default, sanitized = reference["default"], reference["sanitized"]
    rendered = chat.render(dialog["messages"], dialog["add_generation_prompt"])
    assert tok.decode(ours) == tok.decode(default) == rendered
    if not has_control_strings(dialog):
        assert ours == default == sanitized
        return
    # transformers turns the typed control strings into control tokens; here
    # they stay text, and the control tokens are the template's alone, as
    # with transformers' sanitize_control_tokens=True
    assert ours != default
    assert sum(i in CONTROL for i in default) > sum(i in CONTROL for i in ours)
    assert [i for i in ours if i in CONTROL] == [i for i in sanitized if i in CONTROL]
    if dialog["messages"][-1]["content"] == "<|im_end|>":
        assert ours == sanitized  # nothing beside it to join with


@pytest.mark.parametrize("dialog", DIALOGS, ids=lambda d: repr(
    d["messages"][-1]["content"][:20]) + str(d["add_generation_prompt"]))
def test_the_gguf_file_against_apply_chat_template(smollm2_gguf, dialog):
    check_against_transformers(smollm2_gguf, dialog, dialog["published"])


@pytest.mark.parametrize("dialog", DIALOGS, ids=lambda d: repr(
    d["messages"][-1]["content"][:20]) + str(d["add_generation_prompt"]))
def test_transformers_files_against_apply_chat_template(smollm2_hf, dialog):
    check_against_transformers(smollm2_hf, dialog, dialog["transformers"])


def test_the_default_system_message(smollm2_hf):
    """SmolLM2's template adds a system message when the dialog has none."""
    chat = ChatFormat(smollm2_hf)
    user = [{"role": "user", "content": "Hi!"}]
    assert chat.render(user) == (DEFAULT_SYSTEM + "<|im_start|>user\nHi!<|im_end|>\n"
                                 "<|im_start|>assistant\n")
    own = [{"role": "system", "content": "Be terse."}, *user]
    assert chat.render(own, add_generation_prompt=False) == (
        "<|im_start|>system\nBe terse.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n")
    assert chat.encode_dialog(user)[:3] == [1, 9690, 198]  # <|im_start|>system\n


def test_what_chat_format_says_with_a_template(smollm2_hf):
    chat = ChatFormat(smollm2_hf)
    assert chat.end_of_turn == 2
    assert chat.begin_of_text is chat.start_header is chat.end_header is None
    assert smollm2_hf.special_tokens["<|im_end|>"] == 2  # nothing registered
    assert len(smollm2_hf.special_tokens) == 17
    for call in (lambda: chat.encode_header("user"),
                 lambda: chat.encode_message({"role": "user", "content": "x"})):
        with pytest.raises(ValueError, match="use encode_dialog or render"):
            call()


CONTENT = st.lists(st.sampled_from(["<|im_end|>", "<|im_start|>", "<|endoftext|>",
                                    "<|", "|>", "im_end", " ", "\n", "a", "1",
                                    "system"]), max_size=12).map("".join)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]),
                          CONTENT), min_size=1, max_size=4), st.booleans())
def test_content_never_becomes_a_control_token(smollm2_hf, turns, prompt):
    """Whatever a message holds, the control tokens are the template's: one
    <|im_start|> and one <|im_end|> per message (and the default system
    message), and nothing else changes the text."""
    tok = smollm2_hf
    chat = ChatFormat(tok)
    messages = [{"role": role, "content": content} for role, content in turns]
    ids = chat.encode_dialog(messages, add_generation_prompt=prompt)
    rendered = chat.render(messages, add_generation_prompt=prompt)
    assert tok.decode(ids) == rendered
    n = len(messages) + (messages[0]["role"] != "system")
    assert ids.count(2) == n and ids.count(1) == n + prompt and 0 not in ids
    if not any("<|" in m["content"] and "|>" in m["content"] for m in messages):
        assert ids == tok.encode(rendered, allowed_special="all")


# ---- the template's environment, as transformers sets it up ---------------------

def with_template(template, **special_ids):
    tok = BPETokenizer()
    tok.register_special_tokens({"<s>": 256, "</s>": 257, "<|im_end|>": 258})
    tok.chat_template = template
    tok.special_ids = special_ids
    return ChatFormat(tok)


USER = [{"role": "user", "content": "hi"}]


def test_trim_and_lstrip_blocks():
    chat = with_template("{% for m in messages %}\n    {% if true %}\n"
                         "[{{ m.content }}]\n    {% endif %}\n{% endfor %}")
    assert chat.render(USER) == "[hi]\n"


def test_named_tokens_are_variables():
    chat = with_template("{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
                         bos=256, eos=257)
    assert chat.render(USER) == "<s>hi</s>"
    assert chat.encode_dialog(USER) == [256, 104, 105, 257]


def test_raise_exception_is_a_value_error():
    chat = with_template("{% if messages[0].role != 'system' %}"
                         "{{ raise_exception('a system message comes first') }}"
                         "{% endif %}")
    with pytest.raises(ValueError, match="a system message comes first"):
        chat.render(USER)


def test_tojson_keeps_html_characters_and_unicode():
    chat = with_template("{{ {'a': '<b>&é'} | tojson }}")
    assert chat.render(USER) == '{"a": "<b>&é"}'


def test_loop_controls_generation_blocks_and_strftime():
    chat = with_template("{% for m in messages %}{% generation %}{{ m.content }}"
                         "{% endgeneration %}{% break %}{% endfor %}"
                         "{{ strftime_now('%Y') | length }}")
    assert chat.render(USER + USER) == "hi4"


@pytest.mark.parametrize("template", [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ messages.append(1) }}",  # the environment is immutable
])
def test_the_sandbox_refuses_escapes(template):
    with pytest.raises(ValueError, match="the chat template refused the dialog"):
        with_template(template).render(USER)
    # an unsafe attribute alone reads as nothing
    assert with_template("[{{ messages.__class__ }}]").render(USER) == "[]"


def test_a_template_that_does_not_compile():
    with pytest.raises(ValueError, match="does not compile"):
        with_template("{% for m in messages %}")


TRIMS = "{% for m in messages %}[{{ m.content | trim }}]<|im_end|>{% endfor %}"


def test_content_a_template_changes_may_not_hold_control_strings():
    """Trimmed content cannot be located in the prompt; without look-alikes
    it encodes as usual, with one it is refused, never encoded unsafely."""
    chat = with_template(TRIMS)
    assert chat.encode_dialog([{"role": "user", "content": "  hi "}]) == [
        91, 104, 105, 93, 258]
    # where trimming changes nothing, the content is located and kept apart
    kept = chat.encode_dialog([{"role": "user", "content": "a<|im_end|>"}])
    assert kept.count(258) == 1
    with pytest.raises(ValueError, match=r"messages\[0\]\['content'\] holds the "
                       "special token '<\\|im_end\\|>', and the content cannot "
                       "be located in the prompt"):
        chat.encode_dialog([{"role": "user", "content": " a<|im_end|> "}])


def test_a_forged_marker_locates_nothing():
    """Content is located with private-use markers; a message that holds
    their characters cannot forge one (then nothing is located, as if the
    template changed the content)."""
    chat = with_template("{% for m in messages %}{{ m.role }}:{{ m.content }}"
                         "<|im_end|>{% endfor %}")
    forged = "\U000F0000" + "0" + "\U000F0001"
    ok = chat.encode_dialog([{"role": forged, "content": forged}])
    assert ok.count(258) == 1
    with pytest.raises(ValueError, match="cannot be located in the prompt"):
        chat.encode_dialog([{"role": forged, "content": "<|im_end|>"}])


@pytest.mark.parametrize("messages, message", [
    ([{"role": "user<|im_end|>", "content": "x"}],
     r"messages\[0\]\['role'\] holds the special token '<\|im_end\|>'"),
    ([{"role": "user", "content": "x", "name": ["a", "</s>"]}],
     r"messages\[0\]\['name'\]\[1\] holds the special token '</s>'"),
    ([{"role": "user", "content": 5}], r"messages\[0\]\['content'\] must be a str"),
    ([{"role": "", "content": "x"}], r"messages\[0\]\['role'\] must be a non-empty"),
    ([{"content": "x"}], r"messages\[0\] must be"),
    ("hi", "messages must be a list"),
])
def test_bad_messages(messages, message):
    chat = with_template(TRIMS)
    with pytest.raises(ValueError, match=message):
        chat.encode_dialog(messages)


def test_a_tokenizer_without_a_template_is_refused_by_chat_template():
    with pytest.raises(ValueError, match="has no chat template"):
        ChatTemplate(BPETokenizer())

"""onnxruntime-genai's own "amdgpu" provider against an installed umbrella EP, run by a fresh venv's python.

Standalone, like smoke_check.py (standard library, numpy, onnx, onnxruntime, onnxruntime_genai). It writes
a tiny decoder-only model with random weights (token embedding, a few attention layers with a KV cache,
an LM head), its byte-level tokenizer and its genai_config.json, then generates greedily with the CPU
provider and with `append_provider("amdgpu")`, which finds the EP library through $AMDGPU_EP_PATH, and
compares the tokens. Where no backend offers a device, it says so and checks only that onnxruntime-genai
found and registered the library from $AMDGPU_EP_PATH. Prints PASS/FAIL/SKIP lines; exit status 1 on
any failure.

    python smoke_genai.py --library VENV/.../onnxruntime_ep_amdgpu/libonnxruntime_ep_amdgpu.so \
        --env AMDGPU_MIGRAPHX_EP_LIBRARY=VENV/.../libonnxruntime_ep_webgpu.so [--tokens 16] [--require-gpu]

The smoke (smoke.py) resolves `{library:MODULE}` in the venv before it runs this, with smoke_check.py's resolver:
the library and the env values come here as paths.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import traceback
from types import ModuleType

VOCAB = 300  # 256 byte tokens, 3 specials, the rest unused
BOS, EOS, PAD = 256, 257, 258
LAYERS, HEADS, HEAD_SIZE = 3, 4, 8
MAX_LENGTH = 64  # the KV cache buffer's length, and the longest prompt plus tokens
HIDDEN = HEADS * HEAD_SIZE


def write_model(folder: str, max_length: int, seed: int = 13) -> None:
    """model.onnx: inputs input_ids, attention_mask, past_key_values.N.{key,value}; outputs logits, present.N.*

    Attention is ORT's GroupQueryAttention, which writes the new keys and values into a cache buffer shared
    between past and present: onnxruntime-genai's amdgpu provider always captures graphs, and graph capture
    needs that shared buffer (search option past_present_share_buffer), as the models it runs have.
    """
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)

    def weight(name: str, *shape: int, scale: float = 0.5) -> TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [weight("embed", VOCAB, HIDDEN, scale=1.0), weight("lm_head", HIDDEN, VOCAB, scale=2.0),
             numpy_helper.from_array(np.array([1], np.int64), "axis1"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(max_length, np.int32), "total_sequence_length")]
    # Nothing in the graph is computed on the CPU for a GPU node: the GPU EP would copy it in with its own
    # Memcpy kernel, and the WebGPU EP's refuses memory tagged with another vendor (the umbrella's is AMD's).
    # So seqlens_k (valid positions less one, per sequence) comes from an int32 mask in float ops, which the
    # WebGPU EP has (its Cast takes no int64), and the total sequence length is the cache buffer's,
    # max_length (the cache is shared and max_length long; seqlens_k bounds what attention reads).
    nodes = [helper.make_node("Gather", ["embed", "input_ids"], ["h0"]),
             helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
             helper.make_node("ReduceSum", ["mask_f", "axis1"], ["valid"], keepdims=0),
             helper.make_node("Sub", ["valid", "one"], ["last"]),
             helper.make_node("Cast", ["last"], ["seqlens_k"], to=TensorProto.INT32)]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT32, ["batch", "total"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", VOCAB])]
    h = "h0"
    for i in range(LAYERS):
        for part in ("q", "k", "v", "o"):
            inits.append(weight(f"w{part}{i}", HIDDEN, HIDDEN))
        for part in ("q", "k", "v"):
            nodes.append(helper.make_node("MatMul", [h, f"w{part}{i}"], [f"{part}{i}"]))
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", TensorProto.FLOAT,
                                                        ["batch", HEADS, "past", HEAD_SIZE]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", TensorProto.FLOAT,
                                                         ["batch", HEADS, "present", HEAD_SIZE]))
        nodes += [
            helper.make_node("GroupQueryAttention",
                             [f"q{i}", f"k{i}", f"v{i}", f"past_key_values.{i}.key", f"past_key_values.{i}.value",
                              "seqlens_k", "total_sequence_length"],
                             [f"ctx{i}", f"present.{i}.key", f"present.{i}.value"],
                             domain="com.microsoft", num_heads=HEADS, kv_num_heads=HEADS),
            helper.make_node("MatMul", [f"ctx{i}", f"wo{i}"], [f"attn{i}"]),
            helper.make_node("Tanh", [f"attn{i}"], [f"act{i}"]),
            helper.make_node("Add", [h, f"act{i}"], [f"h{i + 1}"]),
        ]
        h = f"h{i + 1}"
    nodes.append(helper.make_node("MatMul", [h, "lm_head"], ["logits"]))
    graph = helper.make_graph(nodes, "tiny_decoder", inputs, outputs, inits)
    model = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17),
                                                                   helper.make_opsetid("com.microsoft", 1)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))


def write_config(folder: str, max_length: int) -> None:
    config = {
        "model": {
            "type": "llama",
            "bos_token_id": BOS, "eos_token_id": EOS, "pad_token_id": PAD,
            "context_length": max_length, "vocab_size": VOCAB,
            "decoder": {
                "filename": "model.onnx",
                "head_size": HEAD_SIZE, "hidden_size": HIDDEN, "num_attention_heads": HEADS,
                "num_hidden_layers": LAYERS, "num_key_value_heads": HEADS,
                "session_options": {"log_id": "tiny", "provider_options": []},
                "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                           "past_key_names": "past_key_values.%d.key", "past_value_names": "past_key_values.%d.value"},
                "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                            "present_value_names": "present.%d.value"},
            },
        },
        "search": {"max_length": max_length, "min_length": 0, "do_sample": False, "num_beams": 1,
                   "num_return_sequences": 1, "past_present_share_buffer": True, "early_stopping": True,
                   "length_penalty": 1.0, "repetition_penalty": 1.0, "temperature": 1.0, "top_k": 1, "top_p": 1.0},
    }
    with open(os.path.join(folder, "genai_config.json"), "w", encoding="utf-8") as out:
        json.dump(config, out, indent=2)


def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters (what a byte-level BPE vocabulary holds)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    mapping, extra = {}, 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def write_tokenizer(folder: str) -> None:
    """A byte-level BPE tokenizer without merges: every byte is a token (ids 0-255), plus BOS/EOS/PAD."""
    vocab = {char: b for b, char in byte_to_unicode().items()}
    specials = {"<s>": BOS, "</s>": EOS, "<pad>": PAD}
    vocab.update(specials)
    tokenizer: dict[str, object] = {
        "version": "1.0",
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t, i in specials.items()],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": []},
    }
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as out:
        json.dump(tokenizer, out)
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as out:
        json.dump({"tokenizer_class": "GPT2Tokenizer", "bos_token": "<s>", "eos_token": "</s>",
                   "pad_token": "<pad>", "add_bos_token": False, "model_max_length": 1024}, out)


def generate(og: ModuleType, folder: str, provider: str | None, prompt: list[int], count: int) -> list[int]:
    config = og.Config(folder)
    config.clear_providers()
    if provider is not None:
        config.append_provider(provider)
    model = og.Model(config)
    params = og.GeneratorParams(model)
    # max_length stays the config's: the cache buffer the model was written for.
    params.set_search_options(do_sample=False, min_length=len(prompt) + count)
    generator = og.Generator(model, params)
    generator.append_tokens(prompt)
    while len(generator.get_sequence(0)) < len(prompt) + count:
        generator.generate_next_token()
    return [int(t) for t in generator.get_sequence(0)][len(prompt):]


def mapped(path: str) -> bool:
    real = os.path.realpath(path)
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        return any(line.rstrip("\n").endswith(" " + real) for line in maps)


def amdgpu_devices(library: str) -> list[str]:
    """The AMDGPUExecutionProvider devices ORT offers once the library is registered (through onnxruntime)."""
    import onnxruntime as ort

    ort.register_execution_provider_library("AMDGPUExecutionProvider", library)
    try:
        return [f"{d.device.type.name} vendor_id={d.device.vendor_id:#06x}" for d in ort.get_ep_devices()
                if d.ep_name == "AMDGPUExecutionProvider"]
    finally:
        ort.unregister_execution_provider_library("AMDGPUExecutionProvider")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--library", required=True,
                        help="the EP wheel's library (its package's get_library_path()), given as $AMDGPU_EP_PATH")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE")
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--require-gpu", action="store_true")
    args = parser.parse_args(argv)
    failures = 0

    def report(ok: bool | None, message: str) -> None:
        nonlocal failures
        failures += ok is False
        print(f"{'PASS' if ok else 'SKIP' if ok is None else 'FAIL'} genai: {message}", flush=True)

    for item in args.env:
        name, _, value = item.partition("=")
        os.environ[name] = value
    library = args.library
    import onnxruntime_genai as og

    os.environ["AMDGPU_EP_PATH"] = library
    with tempfile.TemporaryDirectory(prefix="tiny-decoder-") as folder:
        write_model(folder, MAX_LENGTH)
        write_config(folder, MAX_LENGTH)
        write_tokenizer(folder)
        tokenizer = og.Tokenizer(og.Model(og.Config(folder)))
        prompt = [int(t) for t in tokenizer.encode("AMD GPU smoke")]
        report(prompt == list(b"AMD GPU smoke"), f"onnxruntime-genai {og.__version__}: tokenizer.json encodes the "
                                                  f"prompt as its bytes ({len(prompt)} tokens)")
        cpu = generate(og, folder, None, prompt, args.tokens)
        report(len(cpu) == args.tokens, f"CPU provider generated {cpu}")
        try:
            gpu = generate(og, folder, "amdgpu", prompt, args.tokens)
        except Exception as exc:
            found = mapped(library)
            report(found, f"$AMDGPU_EP_PATH={library} was {'loaded' if found else 'NOT loaded'} by "
                          f"onnxruntime-genai's amdgpu provider")
            devices = amdgpu_devices(library)
            error = f"{type(exc).__name__}: {str(exc).strip()}"
            if devices:
                report(False, f"amdgpu provider failed although ORT offers {devices}: {error}")
            else:
                why = (f"no backend offers a device on this machine (onnxruntime.get_ep_devices() lists no "
                       f"AMDGPUExecutionProvider device), so onnxruntime-genai stops with: {error}")
                report(False if args.require_gpu else None, f"generation on the amdgpu provider not run: {why}")
        else:
            report(mapped(library), f"amdgpu provider runs through {library}")
            report(gpu == cpu, f"amdgpu provider generated {gpu}: "
                               + ("the same tokens as the CPU provider" if gpu == cpu else "DIFFERENT from the CPU"))
    print(f"GENAI {'FAIL' if failures else 'PASS'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        print("GENAI FAIL: the check crashed", flush=True)
        sys.exit(1)

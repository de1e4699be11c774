"""Chinese segmentation of Han runs: only Han runs change, and rjieba cuts like jieba."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.features.charclass import HAN, char_classes
from neardup.features.segment import may_contain_han, segment_han_runs, segmenter

HAN_TEXT = "国务院总理今天在北京会见了来访的法国外长双方就两国关系交换意见苹果公司发布手机"
mixed = st.text(
    alphabet=st.sampled_from(HAN_TEXT + "iPhone 15，售价5999元; abc") | st.characters(),
    max_size=40,
)


def drop_spaces_between_han(text: str) -> str:
    table = char_classes()
    return "".join(
        ch
        for i, ch in enumerate(text)
        if not (
            ch == " "
            and 0 < i < len(text) - 1
            and table[ord(text[i - 1])] == HAN
            and table[ord(text[i + 1])] == HAN
        )
    )


@settings(max_examples=150, deadline=None)
@given(mixed)
def test_segmentation_only_inserts_spaces_between_han_characters(text: str) -> None:
    out = segment_han_runs(text, segmenter("jieba"))
    assert drop_spaces_between_han(out) == drop_spaces_between_han(text)


@settings(max_examples=150, deadline=None)
@given(mixed)
def test_rjieba_cuts_like_jieba(text: str) -> None:
    assert segment_han_runs(text, segmenter("rjieba")) == segment_han_runs(text, segmenter("jieba"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(HAN_TEXT + "𠀀豈") | st.characters(), max_size=20))
def test_han_probe_never_misses_a_han_character(text: str) -> None:
    has_han = any(char_classes()[ord(ch)] == HAN for ch in text)
    if has_han:
        assert may_contain_han(text.encode("utf-8", "surrogatepass"))


def test_segmenter_names() -> None:
    assert segment_han_runs("今天天气不错", segmenter("auto")) == "今天天气 不错"
    assert segment_han_runs("no han here", segmenter("jieba")) == "no han here"
    try:
        segmenter("thulac")
    except ValueError as e:
        assert "unknown segmenter 'thulac'" in str(e)
    else:  # pragma: no cover
        raise AssertionError("an unknown segmenter must be refused")

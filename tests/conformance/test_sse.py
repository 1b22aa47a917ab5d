from deepseek_recipe_conformance.sse import encode_sse, parse_sse


def test_events_with_names_and_multiline_data():
    raw = b"event: a\ndata: 1\ndata: 2\n\ndata: [DONE]\n\n"
    stream = parse_sse(raw)
    assert [(e.event, e.data) for e in stream.events] == [("a", "1\n2"), (None, "[DONE]")]
    assert stream.done and stream.tail == ""
    assert stream.events[0].end_offset == raw.index(b"data: [DONE]")


def test_crlf_cr_comments_and_bom():
    raw = '\ufeff: keep-alive\r\n\r\ndata: {"x": 1}\r\n\r\ndata:2\r\r'.encode()
    stream = parse_sse(raw)
    assert stream.comments == ["keep-alive"]
    assert [e.data for e in stream.events] == ['{"x": 1}', "2"]
    assert stream.payloads() == [{"x": 1}, 2]


def test_unterminated_event_is_reported_as_tail():
    stream = parse_sse(b"data: 1\n\ndata: 2\n")
    assert [e.data for e in stream.events] == ["1"]
    assert stream.tail == "data: 2\n"


def test_invalid_utf8_flagged_and_non_json_payload():
    stream = parse_sse(b"data: \xff\n\n")
    assert stream.invalid_utf8
    assert stream.payloads() == [None]


def test_field_without_space_and_unknown_fields():
    stream = parse_sse(b"id: 3\nretry: 10\nevent:x\ndata:{}\n\n")
    assert [(e.event, e.data) for e in stream.events] == [("x", "{}")]


def test_encode_roundtrip_with_utf8_offsets():
    raw = encode_sse([("e", '{"t":"数据"}'), (None, "[DONE]")])
    stream = parse_sse(raw)
    assert stream.events[0].json() == {"t": "数据"}
    assert stream.events[-1].end_offset == len(raw)

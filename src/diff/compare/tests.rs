use super::*;

fn lines(texts: &[&str]) -> Vec<Vec<u8>> {
    texts.iter().map(|t| t.as_bytes().to_vec()).collect()
}

fn inputs(texts: &[&str]) -> Vec<Input> {
    let mut inputs: Vec<Input> = texts.iter().map(|t| Input::Line(t.as_bytes().to_vec())).collect();
    inputs.push(Input::Sync);
    inputs
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}"#;

/// The divergences between `a` and `b` (both closed) after `sent`, as `(class, method, at)`.
fn diff(sent: &[&str], a: &[&str], b: &[&str]) -> Vec<(Class, String, String)> {
    diff_ended(sent, a, &Ending::Closed, b, &Ending::Closed, &Ignore::default())
}

fn diff_ended(
    sent: &[&str],
    a: &[&str],
    ending_a: &Ending,
    b: &[&str],
    ending_b: &Ending,
    ignore: &Ignore,
) -> Vec<(Class, String, String)> {
    let (a, b) = (lines(a), lines(b));
    let found = compare(
        &inputs(sent),
        Side { received: &a, ending: ending_a },
        Side { received: &b, ending: ending_b },
        ignore,
    );
    found.into_iter().map(|d| (d.class, d.method, d.at)).collect()
}

fn one(class: Class, method: &str, at: &str) -> Vec<(Class, String, String)> {
    vec![(class, method.to_string(), at.to_string())]
}

const TOOLS: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","description":"Adds.","inputSchema":{"type":"object"}}]}}"#;

#[test]
fn the_same_answers_in_another_order_agree() {
    let sum = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"3"}]}}"#;
    assert_eq!(diff(&[LIST, CALL], &[TOOLS, sum], &[sum, TOOLS]), vec![]);
}

#[test]
fn what_legitimately_varies_is_left_out() {
    let described = TOOLS.replace("Adds.", "Adds two numbers.");
    assert_eq!(diff(&[LIST], &[TOOLS], &[&described]), vec![]);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let server = |name: &str, at: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","serverInfo":{{"name":"{name}","version":"1.0"}},"instructions":"{at}"}}}}"#
        )
    };
    assert_eq!(diff(&[init], &[&server("calc", "x")], &[&server("calc-py", "y")]), vec![]);
    let message = |text: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32601,"message":"{text}"}}}}"#);
    assert_eq!(diff(&[LIST], &[&message("no such method")], &[&message("Method not found")]), vec![]);
    let made = |id: &str, at: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"structuredContent":{{"noteId":"{id}","at":"{at}"}}}}}}"#)
    };
    let (x, y) = (made("n-1", "2026-12-05T10:00:00Z"), made("n-2", "2026-12-05T10:00:01.5Z"));
    assert_eq!(diff(&[CALL], &[&x], &[&y]), vec![]);
    let failed = |text: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"isError":true,"content":[{{"type":"text","text":"{text}"}}]}}}}"#
        )
    };
    assert_eq!(diff(&[CALL], &[&failed("bad a")], &[&failed("Input validation error")]), vec![]);
}

#[test]
fn a_result_against_an_error_diverges() {
    let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#;
    assert_eq!(diff(&[LIST], &[TOOLS], &[error]), one(Class::ResultVsError, "tools/list", "result vs error"));
}

#[test]
fn error_codes_and_error_data_that_differ_diverge() {
    let error =
        |code: &str, data: &str| format!(r#"{{"jsonrpc":"2.0","id":2,"error":{{"code":{code},"message":"m"{data}}}}}"#);
    assert_eq!(
        diff(&[CALL], &[&error("-32602", "")], &[&error("-32603", "")]),
        one(Class::ErrorCode, "tools/call add", "error.code")
    );
    assert_eq!(
        diff(&[CALL], &[&error("-32601", "")], &[&error("-32601.0", "")]),
        one(Class::ErrorCode, "tools/call add", "error.code")
    );
    // `data` is the server's to define (JSON-RPC 2.0 §5.1): left out, but where MCP gives it a shape (-32022).
    let with = error("-32602", r#","data":{"field":"a"}"#);
    assert_eq!(diff(&[CALL], &[&with], &[&error("-32602", "")]), vec![]);
    let texts = Ignore { patterns: Vec::new(), texts: false };
    let found = diff_ended(&[CALL], &[&with], &Ending::Closed, &[&error("-32602", "")], &Ending::Closed, &texts);
    assert_eq!(found, one(Class::ErrorData, "tools/call add", "error.data"));
    let refused =
        |supported: &str| error("-32022", &format!(r#","data":{{"supported":[{supported}],"requested":"x"}}"#));
    let (one_version, two) = (refused(r#""2026-07-28""#), refused(r#""2026-07-28","2025-11-25""#));
    assert_eq!(
        diff(&[CALL], &[&one_version], &[&two]),
        one(Class::ErrorData, "tools/call add", "error.data.supported.length")
    );
}

#[test]
fn an_answer_against_silence_diverges_unless_the_silent_side_ended() {
    assert_eq!(diff(&[LIST], &[TOOLS], &[]), one(Class::AnswerVsSilence, "tools/list", "reply"));
    assert_eq!(diff(&[LIST], &[], &[TOOLS]), one(Class::AnswerVsSilence, "tools/list", "reply"));
    let exited = Ending::Exited { code: Some(1), signal: None, stderr_tail: Vec::new() };
    let found = diff_ended(&[LIST], &[TOOLS], &Ending::Closed, &[], &exited, &Ignore::default());
    assert_eq!(found, one(Class::Ending, "-", "closed vs exited"), "keyed by the endings, not by the request");
    let hung = Ending::Hung { waited_ms: 2000 };
    let found = diff_ended(&[LIST], &[], &hung, &[TOOLS], &Ending::Closed, &Ignore::default());
    assert_eq!(found, one(Class::Ending, "-", "hung vs closed"));
    let both = diff_ended(
        &[LIST],
        &[],
        &exited,
        &[],
        &Ending::Exited { code: Some(2), signal: None, stderr_tail: vec![] },
        &Ignore::default(),
    );
    assert_eq!(both, vec![], "two exits with other codes are the same ending");
}

#[test]
fn results_whose_content_or_result_type_differs_diverge() {
    let twice = TOOLS.replace(r#"}}]}}"#, r#"}},{"name":"add","inputSchema":{"type":"object"}}]}}"#);
    assert_eq!(diff(&[LIST], &[TOOLS], &[&twice]), one(Class::Result, "tools/list", "result.tools.length"));
    let string_schema = TOOLS.replace(r#"{"type":"object"}"#, r#""object""#);
    assert_eq!(
        diff(&[LIST], &[TOOLS], &[&string_schema]),
        one(Class::Result, "tools/list", "result.tools[].inputSchema")
    );
    let sum = |n: &str| format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"structuredContent":{{"sum":{n}}}}}}}"#);
    assert_eq!(
        diff(&[CALL], &[&sum("3")], &[&sum("3.0")]),
        one(Class::Result, "tools/call add", "result.structuredContent.sum")
    );
    let typed = |t: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[],"resultType":"{t}"}}}}"#);
    assert_eq!(
        diff(&[LIST], &[&typed("complete")], &[&typed("partial")]),
        one(Class::ResultType, "tools/list", "result.resultType")
    );
    let meta = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"calc"}}}}"#;
    let bare = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"_meta":{}}}"#;
    assert_eq!(
        diff(&[LIST], &[meta], &[bare]),
        one(Class::Result, "tools/list", r#"result._meta["io.modelcontextprotocol/serverInfo"]"#)
    );
}

#[test]
fn an_era_request_or_a_refused_version_is_an_era_divergence() {
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#;
    let served = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}"#;
    let missing = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#;
    assert_eq!(diff(&[discover], &[served], &[missing]), one(Class::Era, "server/discover", "result vs error"));
    let refused =
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}"#;
    assert_eq!(diff(&[LIST], &[TOOLS], &[refused]), one(Class::Era, "tools/list", "result vs error"));
}

#[test]
fn an_id_echoed_changed_and_an_odd_envelope_diverge() {
    let as_string = TOOLS.replace(r#""id":1"#, r#""id":"1""#);
    assert_eq!(diff(&[LIST], &[TOOLS], &[&as_string]), one(Class::Id, "tools/list", "id"));
    let big = r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}"#;
    let exact = TOOLS.replace(r#""id":1"#, r#""id":9007199254740993"#);
    let rounded = TOOLS.replace(r#""id":1"#, r#""id":9007199254740992"#);
    assert_eq!(diff(&[big], &[&exact], &[&rounded]), one(Class::Id, "tools/list", "id (an integer beyond 2^53)"));
    // A server that cannot hold a big id loses it, whatever error it answers.
    let lost = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#;
    let refused = r#"{"jsonrpc":"2.0","id":9007199254740993,"error":{"code":-32602,"message":"bad"}}"#;
    assert_eq!(diff(&[big], &[refused], &[lost]), one(Class::Id, "tools/list", "id (an integer beyond 2^53)"));
    let number = TOOLS.replace(r#""jsonrpc":"2.0""#, r#""jsonrpc":2.0"#);
    assert_eq!(diff(&[LIST], &[TOOLS], &[&number]), one(Class::Envelope, "tools/list", "jsonrpc"));
    let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#;
    let both = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"},"result":null}"#;
    assert_eq!(
        diff(&[LIST], &[error], &[both]),
        one(Class::Envelope, "tools/list", "members error,id,jsonrpc vs error,id,jsonrpc,result")
    );
}

#[test]
fn output_that_answers_no_request_diverges() {
    let note = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#;
    let reply = r#"{"jsonrpc":"2.0","id":null,"result":{}}"#;
    assert_eq!(diff(&[note], &[], &[reply]), one(Class::ExtraReply, "-", "reply with id null"));
    let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    assert_eq!(diff(&[LIST], &[TOOLS, log], &[TOOLS]), one(Class::ExtraOutput, "-", "notifications/message"));
    assert_eq!(
        diff(&[LIST], &[TOOLS], &["calling add", TOOLS]),
        one(Class::ExtraOutput, "-", "a line that is not JSON")
    );
    let parse_error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
    assert_eq!(diff(&["{not json"], &[parse_error], &[parse_error]), vec![]);
}

#[test]
fn ignored_paths_and_cut_transcripts_are_not_compared() {
    let twice = TOOLS.replace(r#"}}]}}"#, r#"}},{"name":"add","inputSchema":{"type":"object"}}]}}"#);
    let ignore = Ignore::with(vec!["result.tools.*".into()]);
    assert_eq!(diff_ended(&[LIST], &[TOOLS], &Ending::Closed, &[&twice], &Ending::Closed, &ignore), vec![]);
    let other = Ignore::with(vec!["result.prompts.**".into()]);
    assert_eq!(diff_ended(&[LIST], &[TOOLS], &Ending::Closed, &[&twice], &Ending::Closed, &other).len(), 1);
    let cut = Ending::Cut { events: 10 };
    assert_eq!(diff_ended(&[LIST], &[TOOLS], &cut, &[], &Ending::Closed, &Ignore::default()), vec![]);
}

#[test]
fn glob_steps_within_and_across_dots() {
    assert!(glob(b"result.*.name", b"result.tools.name"));
    assert!(!glob(b"result.*.name", b"result.tools[].x.name"));
    assert!(glob(b"result.**.name", b"result.tools[].x.name"));
    assert!(glob(b"**", b""));
    assert!(!glob(b"error.code", b"error.codes"));
}

#[test]
fn class_ids_come_back_from_their_names() {
    for class in Class::ALL {
        assert_eq!(Class::from_id(class.id()), Some(class));
        assert!(!class.meaning().is_empty());
    }
    assert_eq!(Class::from_id("nonsense"), None);
}

#[test]
fn an_error_that_lost_its_id_answers_the_request_the_other_side_answered() {
    let error = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"m"}}}}"#);
    assert_eq!(diff(&[CALL], &[&error("2")], &[&error("null")]), one(Class::Id, "tools/call add", "id"));
    assert_eq!(diff(&[CALL], &[&error("null")], &[&error("null")]), vec![], "both lost it: the same answer");
}

#[test]
fn generated_method_names_are_one_method() {
    let odd = |name: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{name}"}}"#);
    let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}"#;
    assert_eq!(diff(&[&odd("x\\ty")], &[error], &[]), one(Class::AnswerVsSilence, "(other method)", "reply"));
    let long = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{}"}}}}"#, "w".repeat(100));
    assert_eq!(
        diff(&[&long], &[], &[error.replace(":1,", ":2,").as_str()]),
        one(Class::AnswerVsSilence, "tools/call (odd name)", "reply")
    );
}

#[test]
fn message_texts_are_compared_when_asked() {
    let message = |text: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32602,"message":"{text}"}}}}"#);
    let texts = Ignore { patterns: Vec::new(), texts: false };
    let (a, b) = (message("missing: a"), message("missing: b"));
    assert_eq!(
        diff_ended(&[LIST], &[&a], &Ending::Closed, &[&b], &Ending::Closed, &texts),
        one(Class::ErrorData, "tools/list", "error.message")
    );
    assert_eq!(diff(&[LIST], &[&a], &[&b]), vec![]);
    let made = |at: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"at":"{at}"}}}}"#);
    let (x, y) = (made("2026-12-05T10:00:00Z"), made("2026-12-06T10:00:00Z"));
    assert_eq!(
        diff_ended(&[LIST], &[&x], &Ending::Closed, &[&y], &Ending::Closed, &texts),
        vec![],
        "timestamps stay out"
    );
}

#[test]
fn two_sides_that_answer_alike_agree_however_loosely_their_replies_pair() {
    // Both ids round to the same double: each side's only reply pairs loosely with the first request, alike.
    let first = r#"[{"id":1844674407370955161000000000000000000002,"method":"ping"}]"#;
    let second = r#"{"id":1844674407370955161000000000000000000006}"#;
    let batch = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no batches"}}"#;
    let reply =
        r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000006,"error":{"code":-32600,"message":"m"}}"#;
    assert_eq!(diff(&[first, second], &[batch, reply], &[batch, reply]), vec![]);
}

/// The line in docs/src/reference/divergences.md after which the generated table starts.
const MARKER: &str = "<!-- generated: the table below is render_classes() -->\n";

/// docs/src/reference/divergences.md is the intro above [`MARKER`] followed by the rendered table. To regenerate it
/// after changing a class: `MCP_WIREFUZZ_BLESS=1 cargo test --lib diff::compare`.
#[test]
fn docs_divergences_md_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/reference/divergences.md");
    let current = std::fs::read_to_string(path).unwrap_or_default();
    let intro = current.split_once(MARKER).map_or("# Divergence classes\n\n", |(intro, _)| intro);
    let expected = format!("{intro}{MARKER}\n{}", render_classes());
    if std::env::var_os("MCP_WIREFUZZ_BLESS").is_some() {
        std::fs::write(path, &expected).unwrap();
        return;
    }
    assert!(
        current == expected,
        "docs/src/reference/divergences.md is stale; regenerate it with `MCP_WIREFUZZ_BLESS=1 cargo test --lib diff::compare`"
    );
}

#[test]
fn a_member_that_means_what_its_absence_means_agrees() {
    let tool = |extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"add","inputSchema":{{"type":"object"}}{extra}}}]}}}}"#
        )
    };
    assert_eq!(diff(&[LIST], &[&tool(r#","title":"Add""#)], &[&tool("")]), vec![]);
    assert_eq!(diff(&[LIST], &[&tool(r#","description":"Adds.""#)], &[&tool("")]), vec![]);
    let (forbidden, optional) =
        (tool(r#","execution":{"taskSupport":"forbidden"}"#), tool(r#","execution":{"taskSupport":"optional"}"#));
    assert_eq!(diff(&[LIST], &[&forbidden], &[&tool(r#","execution":{}"#)]), vec![]);
    assert_eq!(diff(&[LIST], &[&forbidden], &[&tool("")]), vec![], "an object of defaults is as good as none");
    let capability = |tools: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"capabilities":{{{tools}}}}}}}"#);
    let (declared, none) = (capability(r#""tools":{}"#), capability(""));
    assert_eq!(diff(&[LIST], &[&declared], &[&none]), one(Class::Result, "tools/list", "result.capabilities.tools"));
    assert_eq!(
        diff(&[LIST], &[&optional], &[&tool(r#","execution":{}"#)]),
        one(Class::Result, "tools/list", "result.tools[].execution.taskSupport")
    );
    let result = |is_error: &str| format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"content":[]{is_error}}}}}"#);
    assert_eq!(diff(&[CALL], &[&result(r#","isError":false"#)], &[&result("")]), vec![]);
    assert_eq!(
        diff(&[CALL], &[&result(r#","isError":true"#)], &[&result("")]),
        one(Class::Result, "tools/call add", "result.isError")
    );
}

#[test]
fn replies_to_no_request_pair_out_of_order_and_are_told_by_kind() {
    let parse = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    let invalid = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;
    assert_eq!(
        diff(&["{x", "[]"], &[parse, invalid], &[invalid, parse]),
        vec![],
        "the same two errors in another order"
    );
    let sum = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#;
    assert_eq!(diff(&[CALL], &[sum], &[sum, sum]), one(Class::ExtraReply, "-", "second reply to a request"));
    let stray = r#"{"jsonrpc":"2.0","id":77,"result":{}}"#;
    assert_eq!(diff(&[CALL], &[sum, stray], &[sum]), one(Class::ExtraReply, "-", "reply with an id no request has"));
    let no_id = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#;
    assert_eq!(diff(&["[]"], &[], &[no_id]), one(Class::ExtraReply, "-", "reply with no id"));
}

#[test]
fn a_request_a_lenient_reader_takes_is_a_request() {
    // A byte-order mark before a request: one side drops the line, the other answers it.
    let bom = format!("\u{feff}{LIST}");
    let (a, b) = (lines(&[]), lines(&[TOOLS]));
    let mut sent = vec![Input::Line(bom.into_bytes()), Input::Sync];
    let found = compare(
        &sent,
        Side { received: &a, ending: &Ending::Closed },
        Side { received: &b, ending: &Ending::Closed },
        &Ignore::default(),
    );
    assert_eq!(
        found.iter().map(|d| (d.class, d.method.as_str())).collect::<Vec<_>>(),
        vec![(Class::AnswerVsSilence, "tools/list")]
    );
    // An error without an id answers the request the other side answered.
    sent = inputs(&[LIST]);
    let no_id = lines(&[r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#]);
    let error = lines(&[r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid request"}}"#]);
    let found = compare(
        &sent,
        Side { received: &error, ending: &Ending::Closed },
        Side { received: &no_id, ending: &Ending::Closed },
        &Ignore::default(),
    );
    assert_eq!(found.iter().map(|d| (d.class, d.at.as_str())).collect::<Vec<_>>(), vec![(Class::Id, "id")]);
}

#[test]
fn id_less_errors_written_in_another_order_agree() {
    // A request with a null id, a line that is not JSON, and an error that lost its id: the three null-id errors
    // come in another order on one side.
    let sent = [r#"{"id":null,"method":"server/discover"}"#, "{", r#"{"id":5,"method":"ping"}"#];
    let invalid = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;
    let parse = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    let lost = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"bad"}}"#;
    let kept = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad"}}"#;
    assert_eq!(diff(&sent, &[invalid, parse, lost], &[lost, parse, invalid]), vec![]);
    assert_eq!(diff(&sent, &[invalid, parse, kept], &[parse, lost, invalid]), one(Class::Id, "ping", "id"));
}

#[test]
fn a_cancelled_request_may_be_answered_or_not() {
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}"#;
    let batch = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no batches"}}"#;
    assert_eq!(diff(&[LIST, cancel, "[]"], &[TOOLS, batch], &[batch]), vec![]);
    let owed = diff(&[LIST, "[]"], &[TOOLS, batch], &[batch]);
    assert_eq!(owed, one(Class::AnswerVsSilence, "tools/list", "reply"), "not cancelled: the result is owed");
}

#[test]
fn an_id_less_error_both_sides_wrote_answers_no_request() {
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}"#;
    let refused = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"wrong era"}}"#;
    let batch = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no batches"}}"#;
    // A refuses the (later cancelled) request, B drops it; both refuse the batch alike.
    assert_eq!(diff(&[LIST, cancel, "[]"], &[refused, batch], &[batch]), vec![]);
    // Not cancelled: B's one id-less -32600 is the batch's, not the request's.
    assert_eq!(diff(&[LIST, "[]"], &[refused, batch], &[batch]), one(Class::AnswerVsSilence, "tools/list", "reply"));
}

#[test]
fn silence_on_an_odd_id_says_what_is_odd_about_it() {
    let ping = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    let pong = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
    for (id, at) in [
        ("6.0", "reply (a number with a fraction or exponent)"),
        ("2e+3", "reply (a number with a fraction or exponent)"),
        ("9007199254740993", "reply (an integer beyond 2^53)"),
        ("7", "reply"),
        (r#""x""#, "reply"),
    ] {
        assert_eq!(diff(&[&ping(id)], &[], &[&pong(id)]), one(Class::AnswerVsSilence, "ping", at), "{id}");
    }
}

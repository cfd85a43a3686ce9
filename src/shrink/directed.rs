//! The candidates aimed at the line at fault, tried before the blind passes: that line alone, with the
//! conversation's opening, with the earlier lines of its kind; and how the line at fault is found in a transcript.

use super::Minimized;
use crate::oracle::Finding;
use crate::transcript::seen::resolve;
use crate::transcript::{Event, Input, Transcript};
use serde_json::{Map, Value};

/// The candidates a minimization tries before its passes, smallest first: the input line at fault alone, then the
/// conversation's opening (up to its first sync point, with the notifications right after it) and that line. Most
/// findings need no more, and each costs one run where the passes' halvings cost several (for a hang, a whole wait
/// each). None when the finding's event names no input line ([`fault_input`]).
///
/// A finding that needs more than the line (a store that breaks at its 51st write, in a long session) gets two more:
/// the opening and every earlier line of the fault's kind ([`kind`]: the same method, and the same tool for a tool
/// call) with the fault line, back to back and then each after a sync point; and the conversation up to the sync
/// point after the fault line.
pub(super) fn directed(first: &Minimized) -> Vec<Vec<Input>> {
    let Some(fault) = fault_input(&first.inputs, &first.transcript, &first.finding) else { return Vec::new() };
    let line = first.inputs[fault].clone();
    let mut candidates = vec![vec![line.clone(), Input::Sync]];
    let opened = first.inputs[..fault].iter().position(|input| *input == Input::Sync).map(|sync| {
        let mut opening = first.inputs[..=sync].to_vec();
        opening.extend(first.inputs[sync + 1..fault].iter().take_while(|input| is_notification(input)).cloned());
        opening
    });
    if let Some(opening) = &opened {
        candidates.push([opening.as_slice(), &[line.clone(), Input::Sync]].concat());
    }
    let start = opened.as_ref().map_or(0, Vec::len);
    let fault_kind = kind(&line);
    let kin: Vec<Input> = first.inputs[start.min(fault)..=fault]
        .iter()
        .filter(|input| fault_kind.is_some() && kind(input) == fault_kind)
        .cloned()
        .collect();
    let opening = opened.unwrap_or_default();
    let back_to_back = [opening.as_slice(), &kin, &[Input::Sync]].concat();
    let synced = opening.iter().cloned().chain(kin.into_iter().flat_map(|line| [line, Input::Sync])).collect();
    candidates.extend([back_to_back, synced]);
    if let Some(sync) = first.inputs[fault..].iter().position(|input| *input == Input::Sync) {
        candidates.push(first.inputs[..=fault + sync].to_vec());
    }
    candidates.retain(|candidate| candidate.len() < first.inputs.len());
    candidates.dedup();
    candidates
}

/// What kind of message a line is, for [`directed`]: its method, and a tool call's tool name; `None` for a line
/// that is no JSON object with a method, even read leniently (a string of bytes that are not UTF-8 is a call all the
/// same).
fn kind(input: &Input) -> Option<(String, Option<String>)> {
    let Input::Line(line) = input else { return None };
    let lenient = || crate::protocol::json::lenient_text(line).and_then(|text| serde_json::from_slice(&text).ok());
    let message: Map<String, Value> = serde_json::from_slice(line).ok().or_else(lenient)?;
    let method = message.get("method")?.as_str()?.to_string();
    let tool = message.get("params").and_then(|p| p.get("name")).and_then(Value::as_str).map(str::to_string);
    Some((method, tool))
}

/// The index among `inputs` of the line at fault in `finding`: the one its event carries, or the last input line
/// sent before it (the event may be a line of the harness's own, such as a re-ask); `None` when the event names no
/// input line.
pub(super) fn fault_input(inputs: &[Input], transcript: &Transcript, finding: &Finding) -> Option<usize> {
    let at = finding.event?;
    let at = crate::trigger::answered(&transcript.events, at).unwrap_or(at);
    let mut lines = inputs
        .iter()
        .enumerate()
        .filter_map(|(index, input)| if let Input::Line(line) = input { Some((index, line)) } else { None });
    // The transcript's sent lines, matched in order to the inputs' lines (the harness's own lines in between), each
    // as it was sent: its references to what the server said before resolved.
    let (mut next, mut fault) = (lines.next(), None);
    for (index, event) in transcript.events.iter().enumerate().take(at + 1) {
        if let Event::Sent(sent) = event
            && let Some((input, _)) = next.filter(|(_, line)| *resolve(line, &transcript.events[..index]) == **sent)
        {
            fault = Some(input);
            next = lines.next();
        }
    }
    fault
}

/// The conversation of `inputs` up to the sync point after the line at fault in `finding` ([`fault_input`]), when
/// lines come after it: what a finding about that line's own reply (a handler that never returns) needs, since the
/// lines after it were sent only once its wait was over.
pub fn through_fault(inputs: &[Input], transcript: &Transcript, finding: &Finding) -> Option<Vec<Input>> {
    let fault = fault_input(inputs, transcript, finding)?;
    let sync = fault + inputs[fault..].iter().position(|input| *input == Input::Sync)?;
    (sync + 1 < inputs.len()).then(|| inputs[..=sync].to_vec())
}

/// True when `input` is a JSON-RPC notification: an object with a method and no id.
fn is_notification(input: &Input) -> bool {
    let Input::Line(line) = input else { return false };
    serde_json::from_slice::<Map<String, Value>>(line).is_ok_and(|m| m.contains_key("method") && !m.contains_key("id"))
}

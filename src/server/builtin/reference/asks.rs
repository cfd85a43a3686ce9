//! The server's own requests to the client in the middle of a tool call (a fixture's sampling or elicitation,
//! and the planted bugs that ask before `add`), and what the client's answers complete.

use super::{CalcConnection, Reply, confirm_elicitation};
use crate::protocol::envelope::{CLIENT_CAPABILITIES_KEY, META};
use crate::protocol::methods::ELICITATION_CREATE;
use crate::protocol::{Era, Request, RequestId};
use crate::server::builtin::fixtures;
use crate::server::builtin::mutants::Mutant;
use serde_json::{Value, json};

impl CalcConnection {
    /// A handshake-era fixture tool that asks the client mid-call ([`fixtures::mid_call_request`]): the request
    /// goes out and the call's reply waits for the answer, when the client declared the capability; otherwise the
    /// call says it cannot ask (a server must not use what the client did not declare).
    pub(super) fn ask(&mut self, call: &RequestId, capability: &str, method: &'static str, params: Value) -> Reply {
        if !self.client_capabilities.get(capability).is_some_and(Value::is_object) {
            let text = format!("The client did not declare {capability}, so nothing was asked");
            return Ok(json!({ "content": [{ "type": "text", "text": text }] }));
        }
        self.asked += 1;
        let id = format!("calc-ask-{}", self.asked);
        self.notices.push(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.asks.push((id, call.clone(), method));
        self.withheld = true;
        Ok(json!({}))
    }

    /// True for the planted bugs that ask before a call and read the answer without a check.
    pub(super) fn reads_answers_unchecked(&self) -> bool {
        self.has(Mutant::CrashesOnMalformedAnswer) || self.has(Mutant::HangsOnMalformedAnswer)
    }

    /// What the planted bug does with an answer of the wrong shape: the process exits
    /// ([`Mutant::CrashesOnMalformedAnswer`]), or the call is never answered ([`Mutant::HangsOnMalformedAnswer`]).
    fn misread_answer(&mut self) {
        self.crashed |= self.has(Mutant::CrashesOnMalformedAnswer);
        self.hung |= self.has(Mutant::HangsOnMalformedAnswer);
    }

    /// The planted bugs [`Mutant::CrashesOnMalformedAnswer`] and [`Mutant::HangsOnMalformedAnswer`]: a call of `add`
    /// first asks the client what it declared (a sampling in the handshake era; a confirmation through
    /// `input_required` in 2026-07-28, whose retry it reads without a check, failing on an answer of the wrong
    /// shape). `None` to serve the call as usual.
    pub(super) fn ask_before_calling(&mut self, request: &Request, era: Era) -> Option<Reply> {
        let params = request.params.as_ref();
        if params?.get("name")? != "add" {
            return None;
        }
        match era {
            Era::Handshake if self.client_capabilities.get("sampling").is_some_and(Value::is_object) => {
                let prompt = json!({ "prompt": "Should calc add these?" });
                let (capability, method, asked) = fixtures::mid_call_request("test_sampling", Some(&prompt))?;
                Some(self.ask(&request.id, capability, method, asked))
            }
            Era::Handshake => None,
            Era::Modern => {
                let declared = params?.get(META)?.get(CLIENT_CAPABILITIES_KEY)?.get("elicitation")?.is_object();
                match params?.get("inputResponses") {
                    None if declared => Some(Ok(json!({
                        "resultType": "input_required",
                        "inputRequests": { "confirm": { "method": ELICITATION_CREATE, "params": confirm_elicitation() } },
                        "requestState": "calc-add",
                    }))),
                    None => None,
                    Some(responses) => {
                        let confirm = responses.get("confirm").unwrap_or(&Value::Null);
                        if fixtures::malformed_answer(ELICITATION_CREATE, confirm).is_some() {
                            self.misread_answer();
                            // The retry is the call itself: its reply is withheld.
                            self.withheld |= self.hung;
                        }
                        None
                    }
                }
            }
        }
    }

    /// The client answered a request of the server's: the call that waited for it gets its reply. Other responses
    /// are not answered (a reply would carry an id of the client's own).
    pub(super) fn answered(&mut self, response: crate::protocol::Response, messages: &mut Vec<Value>) {
        let crate::protocol::ResponseId::Id(RequestId::String(id)) = &response.id else { return };
        let Some(at) = self.asks.iter().position(|(asked, _, _)| asked == id) else { return };
        let (_, call, method) = self.asks.remove(at);
        if let (true, crate::protocol::Outcome::Result(result)) = (self.reads_answers_unchecked(), &response.outcome)
            && fixtures::malformed_answer(method, result).is_some()
        {
            self.misread_answer();
            return;
        }
        let result = match &response.outcome {
            crate::protocol::Outcome::Result(result) => fixtures::mid_call_result(method, Ok(result)),
            crate::protocol::Outcome::Error(error) => fixtures::mid_call_result(method, Err(&error.message)),
        };
        messages.push(json!({ "jsonrpc": "2.0", "id": call.to_value(), "result": result }));
    }
}

//! How a calc connection writes a message: serialized, with the planted mutant's output bug applied (an id
//! turned to a string or rounded, a null id on errors, a numeric `jsonrpc`, and the like).

use super::CalcConnection;
use crate::server::builtin::mutants::Mutant;
use serde_json::{Value, json};

impl CalcConnection {
    /// Serializes one message, with the output bug of the planted mutant applied.
    pub(super) fn encode(&self, mut message: Value) -> Vec<u8> {
        if let Some(mutant) = self.mutant {
            plant_output_bug(mutant, &mut message);
        }
        serde_json::to_vec(&message).unwrap_or_default()
    }
}

/// Applies a mutant's output bug to a message about to be written (mutants without one leave it alone).
fn plant_output_bug(mutant: Mutant, message: &mut Value) {
    let Some(object) = message.as_object_mut() else { return };
    let is_error = object.contains_key("error");
    match mutant {
        Mutant::IdAsString => {
            if let Some(Value::Number(n)) = object.get("id") {
                let text = n.to_string();
                object.insert("id".into(), Value::String(text));
            }
        }
        Mutant::BigIdRounded => {
            let as_double = object.get("id").and_then(Value::as_number).and_then(|n| n.to_string().parse::<f64>().ok());
            if let Some(rounded) = as_double.and_then(|f| format!("{f:.0}").parse::<serde_json::Number>().ok()) {
                object.insert("id".into(), Value::Number(rounded));
            }
        }
        Mutant::NullIdOnError if is_error => {
            object.insert("id".into(), Value::Null);
        }
        Mutant::JsonrpcNumber if !is_error => {
            object.insert("jsonrpc".into(), json!(2.0));
        }
        Mutant::ResultAndError if is_error => {
            object.insert("result".into(), Value::Null);
        }
        Mutant::FloatErrorCode => {
            if let Some(error) = object.get_mut("error").and_then(Value::as_object_mut) {
                let code = error.get("code").map(Value::to_string).unwrap_or_default();
                if let Ok(float) = format!("{code}.0").parse::<serde_json::Number>() {
                    error.insert("code".into(), Value::Number(float));
                }
            }
        }
        _ => {}
    }
}

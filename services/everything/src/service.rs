//! The fixtures: each operation answers what the MCP conformance suite expects of the tool,
//! resource or prompt it backs (the reference servers' texts and media), the same over REST.

use everything_api::everything::{EverythingService, errors, models};
use runtime::{Answer, Ask, Context, LogLevel};
use serde_json::json;
use support::{File, Problem};

/// The fixtures hold no state: every answer is fixed by its inputs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Everything;

/// A 1×1 PNG image.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0xf8, 0xcf, 0x50, 0x0f, 0x00, 0x03, 0x86, 0x01, 0x80, 0x5a, 0x34, 0x7d,
    0x6b, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A WAV file: 8 kHz, 8-bit mono, a tenth of a second of a square wave.
fn wav() -> Vec<u8> {
    let samples: Vec<u8> = (0..800).map(|i| if (i / 10) % 2 == 0 { 0xa0 } else { 0x60 }).collect();
    let mut out = Vec::with_capacity(44 + samples.len());
    let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&len(36 + samples.len()));
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&8000u32.to_le_bytes()); // samples per second
    out.extend_from_slice(&8000u32.to_le_bytes()); // bytes per second
    out.extend_from_slice(&1u16.to_le_bytes()); // block align
    out.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&len(samples.len()));
    out.extend_from_slice(&samples);
    out
}

/// The pause between two reported steps.
const STEP: std::time::Duration = std::time::Duration::from_millis(50);

fn text_of(text: String) -> File {
    File::bytes("text/plain", text)
}

/// A form asking a name.
fn name_form(message: &str) -> Ask {
    let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
    Ask::form(message, schema)
}

/// A form asking a yes or no.
fn confirm_form() -> Ask {
    confirm_with("Please confirm")
}

/// A form asking a yes or no to `question`.
fn confirm_with(question: &str) -> Ask {
    let schema = json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] });
    Ask::form(question, schema)
}

/// A form's answer as `action=…, content={…}`.
fn completed(answer: &Answer) -> String {
    let action = answer.0.get("action").and_then(serde_json::Value::as_str).unwrap_or_default();
    let content = answer.0.get("content").cloned().unwrap_or(serde_json::Value::Null);
    format!("action={action}, content={content}")
}

/// A field of a form's answers as text (`(declined)` when the user did not accept it).
fn field(answer: &Answer, name: &str) -> String {
    match answer.accepted() {
        Some(content) => {
            content.get(name).map_or_else(String::new, |v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        }
        None => "(declined)".into(),
    }
}

fn text(text: &'static str) -> File {
    File::bytes("text/plain", text)
}

impl EverythingService for Everything {
    type Context = Context;

    async fn simple_text(&self, _cx: &mut Context) -> Result<File, errors::SimpleTextError> {
        Ok(text("This is a simple text response for testing."))
    }

    async fn image_content(&self, _cx: &mut Context) -> Result<File, errors::ImageContentError> {
        Ok(File::bytes("image/png", PNG))
    }

    async fn audio_content(&self, _cx: &mut Context) -> Result<File, errors::AudioContentError> {
        Ok(File::bytes("audio/wav", wav()))
    }

    async fn embedded_resource(&self, _cx: &mut Context) -> Result<File, errors::EmbeddedResourceError> {
        Ok(text("This is an embedded resource content."))
    }

    async fn mixed_content(&self, _cx: &mut Context) -> Result<models::MixedContent, errors::MixedContentError> {
        use base64::Engine;
        Ok(models::MixedContent {
            text: "Multiple content types test:".into(),
            image: base64::engine::general_purpose::STANDARD.encode(PNG),
            data: serde_json::json!({ "test": "data", "value": 123 }),
        })
    }

    async fn error_handling(&self, _cx: &mut Context) -> Result<(), errors::ErrorHandlingError> {
        Err(errors::ErrorHandlingError::Intentional(Problem::new(
            "This tool intentionally returns an error for testing",
        )))
    }

    async fn with_progress(&self, cx: &mut Context) -> Result<File, errors::WithProgressError> {
        for done in [0.0, 50.0, 100.0] {
            cx.progress(done, Some(100.0), Some(&format!("{done} of 100"))).await;
            tokio::time::sleep(STEP).await;
        }
        Ok(text("Progress reported: 0, 50 and 100 of 100."))
    }

    async fn with_logging(&self, cx: &mut Context) -> Result<File, errors::WithLoggingError> {
        for step in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
            cx.log(LogLevel::Info, step).await;
            tokio::time::sleep(STEP).await;
        }
        Ok(text("Logged three steps."))
    }

    async fn logging_tool(&self, cx: &mut Context) -> Result<File, errors::LoggingToolError> {
        cx.log(LogLevel::Info, "The logging tool ran").await;
        Ok(text("Logged once."))
    }

    async fn custom_header(
        &self,
        _cx: &mut Context,
        input: models::CustomHeaderInput,
    ) -> Result<File, errors::CustomHeaderError> {
        Ok(File::bytes("text/plain", format!("Value: {}", input.value)))
    }

    async fn static_text(&self, _cx: &mut Context) -> Result<File, errors::StaticTextError> {
        Ok(text("This is the content of the static text resource."))
    }

    async fn static_binary(&self, _cx: &mut Context) -> Result<File, errors::StaticBinaryError> {
        Ok(File::bytes("image/png", PNG))
    }

    async fn example_resource(&self, _cx: &mut Context) -> Result<File, errors::ExampleResourceError> {
        Ok(text("This is the content of the example resource."))
    }

    async fn watched_resource(&self, _cx: &mut Context) -> Result<File, errors::WatchedResourceError> {
        Ok(text("This is the content of the watched resource."))
    }

    async fn touch_watched(&self, _cx: &mut Context) -> Result<File, errors::TouchWatchedError> {
        Ok(text("Touched."))
    }

    async fn input_elicitation(&self, cx: &mut Context) -> Result<File, errors::InputElicitationError> {
        let answer = cx.input("user_name", name_form("What is your name?")).await?;
        Ok(text_of(format!("Hello, {}!", field(&answer, "name"))))
    }

    async fn input_sampling(&self, cx: &mut Context) -> Result<File, errors::InputSamplingError> {
        let answer = cx.input("capital_question", Ask::sample("What is the capital of France?", 100)).await?;
        Ok(text_of(format!("The model answered: {}", answer.text())))
    }

    async fn input_roots(&self, cx: &mut Context) -> Result<File, errors::InputRootsError> {
        let answer = cx.input("client_roots", Ask::Roots).await?;
        Ok(text_of(format!("Roots: {}", answer.roots().join(", "))))
    }

    async fn input_request_state(&self, cx: &mut Context) -> Result<File, errors::InputRequestStateError> {
        let answer = cx.input("confirm", confirm_form()).await?;
        Ok(text_of(format!("state-ok: the request state was verified; confirmed: {}", field(&answer, "ok"))))
    }

    async fn input_multiple(&self, cx: &mut Context) -> Result<File, errors::InputMultipleError> {
        let [name, greeting, roots] = cx
            .inputs([
                ("user_name", name_form("What is your name?")),
                ("greeting", Ask::sample("Generate a greeting", 50)),
                ("client_roots", Ask::Roots),
            ])
            .await?;
        let (name, roots) = (field(&name, "name"), roots.roots().join(", "));
        Ok(text_of(format!("{} {name} (roots: {roots})", greeting.text())))
    }

    async fn input_multi_round(&self, cx: &mut Context) -> Result<File, errors::InputMultiRoundError> {
        let name = cx.input("step1", name_form("Step 1: What is your name?")).await?;
        let schema =
            json!({ "type": "object", "properties": { "color": { "type": "string" } }, "required": ["color"] });
        let color = cx.input("step2", Ask::form("Step 2: What is your favorite color?", schema)).await?;
        Ok(text_of(format!("{} likes {}.", field(&name, "name"), field(&color, "color"))))
    }

    async fn input_tampered_state(&self, cx: &mut Context) -> Result<File, errors::InputTamperedStateError> {
        let answer = cx.input("confirm", confirm_form()).await?;
        Ok(text_of(format!("Confirmed: {}", field(&answer, "ok"))))
    }

    async fn input_capabilities(&self, cx: &mut Context) -> Result<File, errors::InputCapabilitiesError> {
        // Both asked in one round (each ask is recorded before its error is returned), each only
        // of a client that can answer it.
        let form = name_form("What is your name?");
        let sample = Ask::sample("What is the capital of France?", 100);
        let name = match cx.can_ask(&form) {
            true => Some(cx.input("user_name", form).await),
            false => None,
        };
        let capital = match cx.can_ask(&sample) {
            true => Some(cx.input("capital_question", sample).await),
            false => None,
        };
        let name = name.transpose()?.map(|a| field(&a, "name")).unwrap_or_else(|| "(no form)".into());
        let capital = capital.transpose()?.map(|a| a.text()).unwrap_or_else(|| "(no model)".into());
        Ok(text_of(format!("Name: {name}; capital: {capital}")))
    }

    async fn missing_capability(&self, cx: &mut Context) -> Result<File, errors::MissingCapabilityError> {
        let answer = cx.input("question", Ask::sample("Say hello.", 20)).await?;
        Ok(text_of(answer.text()))
    }

    async fn streaming_elicitation(&self, cx: &mut Context) -> Result<File, errors::StreamingElicitationError> {
        cx.progress(0.0, Some(1.0), Some("asking for a confirmation")).await;
        let answer = cx.input("confirm", confirm_form()).await?;
        Ok(text_of(format!("Confirmed: {}", field(&answer, "ok"))))
    }

    async fn sampling(&self, cx: &mut Context, input: models::SamplingInput) -> Result<File, errors::SamplingError> {
        let answer = cx.input("sample", Ask::sample(input.prompt, 100)).await?;
        Ok(text_of(format!("LLM response: {}", answer.text())))
    }

    async fn elicitation(
        &self,
        cx: &mut Context,
        input: models::ElicitationInput,
    ) -> Result<File, errors::ElicitationError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "username": { "type": "string", "description": "User's response" },
                "email": { "type": "string", "description": "User's email address" },
            },
            "required": ["username", "email"],
        });
        let answer = cx.input("user_info", Ask::form(input.message, schema)).await?;
        Ok(text_of(format!("User response: {}", completed(&answer))))
    }

    async fn elicitation_defaults(&self, cx: &mut Context) -> Result<File, errors::ElicitationDefaultsError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "description": "Your name", "default": "John Doe" },
                "age": { "type": "integer", "description": "Your age", "default": 30 },
                "score": { "type": "number", "description": "Your score", "default": 95.5 },
                "status": {
                    "type": "string",
                    "description": "Your status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": { "type": "boolean", "description": "Verified?", "default": true },
            },
        });
        let answer =
            cx.input("profile", Ask::form("Please review and update the form fields with defaults", schema)).await?;
        Ok(text_of(format!("Elicitation completed: {}", completed(&answer))))
    }

    async fn elicitation_enums(&self, cx: &mut Context) -> Result<File, errors::ElicitationEnumsError> {
        let titled = |values: [(&str, &str); 3]| -> Vec<serde_json::Value> {
            values.iter().map(|(value, title)| json!({ "const": value, "title": title })).collect()
        };
        let schema = json!({
            "type": "object",
            "properties": {
                "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                "titledSingle": {
                    "type": "string",
                    "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")]),
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": { "type": "array", "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")]),
                    },
                },
            },
        });
        let answer = cx.input("choices", Ask::form("Please choose", schema)).await?;
        Ok(text_of(format!("Elicitation completed: {}", completed(&answer))))
    }

    async fn greet(&self, _cx: &mut Context, input: models::GreetInput) -> Result<File, errors::GreetError> {
        Ok(text_of(format!("Hello, {}!", input.name)))
    }

    async fn slow_compute(
        &self,
        cx: &mut Context,
        input: models::ComputeInput,
    ) -> Result<File, errors::SlowComputeError> {
        cx.background().await;
        let seconds = u64::try_from(input.seconds).unwrap_or_default();
        for done in 0..seconds {
            cx.progress(done as f64, Some(seconds as f64), None).await;
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
        let label = input.label.unwrap_or_default();
        Ok(text_of(format!("Computed for {seconds} s ({label}).")))
    }

    async fn failing_job(&self, cx: &mut Context) -> Result<File, errors::FailingJobError> {
        cx.background().await;
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        Err(errors::FailingJobError::JobFailed(Problem::new("The job failed after a second, as it always does")))
    }

    async fn protocol_error_job(&self, cx: &mut Context) -> Result<File, errors::ProtocolErrorJobError> {
        cx.background().await;
        // The fixture of a server fault: the task fails with a JSON-RPC error, not a tool error.
        panic!("the protocol error fixture breaks on purpose");
    }

    async fn confirm_delete(
        &self,
        cx: &mut Context,
        input: models::DeleteInput,
    ) -> Result<File, errors::ConfirmDeleteError> {
        cx.background().await;
        let question = format!("Delete {}?", input.filename);
        let answer = cx.input("confirm", confirm_with(&question)).await?;
        let verdict = if field(&answer, "ok") == "true" { "Deleted" } else { "Kept" };
        Ok(text_of(format!("{verdict} {}.", input.filename)))
    }

    async fn multi_input(&self, cx: &mut Context) -> Result<File, errors::MultiInputError> {
        cx.background().await;
        let [name, color] = cx
            .inputs([
                ("name", name_form("What is your name?")),
                (
                    "color",
                    Ask::form(
                        "What is your favorite color?",
                        json!({
                            "type": "object", "properties": { "color": { "type": "string" } }, "required": ["color"],
                        }),
                    ),
                ),
            ])
            .await?;
        Ok(text_of(format!("{} likes {}.", field(&name, "name"), field(&color, "color"))))
    }

    async fn tool_with_task(&self, cx: &mut Context) -> Result<File, errors::ToolWithTaskError> {
        // Asked in the call (an input round), then the rest goes on as a task.
        let answer = cx.input("user_name", name_form("What is your name?")).await?;
        cx.background().await;
        Ok(text_of(format!("Hello, {}! The task is done.", field(&answer, "name"))))
    }

    async fn template_data(
        &self,
        _cx: &mut Context,
        input: models::TemplateRef,
    ) -> Result<models::TemplateData, errors::TemplateDataError> {
        let data = format!("Data for ID: {}", input.id);
        Ok(models::TemplateData { id: input.id, template_test: true, data })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_sound_is_a_wav_file_of_its_length() {
        let wav = super::wav();
        assert_eq!((&wav[..4], &wav[8..12]), (&b"RIFF"[..], &b"WAVE"[..]));
        assert_eq!(u32::from_le_bytes(wav[4..8].try_into().unwrap()) as usize, wav.len() - 8);
    }
}

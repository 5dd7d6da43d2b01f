//! Request bodies that are not JSON, against the notes binary on both backends: files attached
//! as multipart parts and as raw bodies (stored as they arrive, downloaded back byte for byte),
//! their refusals (a type not accepted, a size over the limit, a missing part, another
//! tenant's note), and a note captured from an HTML form.

mod notes_server;

use notes_server::Server;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const BOUNDARY: &str = "specwright-test-boundary";

/// One part: its name, its file name and media type when it is a file, its content.
type Part<'a> = (&'a str, Option<(&'a str, &'a str)>, &'a [u8]);

/// A `multipart/form-data` body of `parts`.
fn multipart(parts: &[Part]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, file, content) in parts {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match file {
            Some((filename, media_type)) => body.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {media_type}\r\n\r\n"
                )
                .as_bytes(),
            ),
            None => body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes()),
        }
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

fn hex_sha256(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

async fn uploads(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let tenant = format!("files-{}", uuid::Uuid::now_v7().simple());
    let write = s.token(&tenant, "notes:write");
    let notes = s.url("/api/v1/notes");
    let created = client.post(&notes).bearer_auth(&write).json(&json!({"title": "with files"})).send().await.unwrap();
    let id = created.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let attachments = format!("{notes}/{id}/attachments");
    let upload = |body: Vec<u8>| {
        client
            .post(&attachments)
            .bearer_auth(&write)
            .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
            .body(body)
            .send()
    };

    // A file part and a text part; a browser's `C:\fakepath\` prefix is dropped from the name.
    let text = "hello, attachments\n".repeat(20_000).into_bytes();
    let body =
        multipart(&[("caption", None, b"greetings"), ("file", Some(("C:\\fakepath\\hello.txt", "text/plain")), &text)]);
    let resp = upload(body.clone()).await.unwrap();
    let (status, made) = (resp.status(), resp.json::<Value>().await.unwrap());
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["name"], "hello.txt");
    assert_eq!((made["media_type"].as_str(), made["caption"].as_str()), (Some("text/plain"), Some("greetings")));
    assert_eq!(
        (made["size"].as_u64(), made["sha256"].as_str()),
        (Some(text.len() as u64), Some(hex_sha256(&text).as_str()))
    );

    let file = client.get(format!("{attachments}/hello.txt")).bearer_auth(&write).send().await.unwrap();
    assert_eq!(file.status(), 200);
    assert_eq!(file.headers()["content-type"], "text/plain");
    assert_eq!(file.headers()["content-length"], text.len().to_string().as_str());
    assert!(file.headers()["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"hello.txt\""));
    assert_eq!(file.headers()["accept-ranges"], "bytes");
    let tag = file.headers()["etag"].to_str().unwrap().to_string();
    assert_eq!(file.bytes().await.unwrap().as_ref(), text.as_slice(), "byte for byte");

    // Parts of it (the file spans two stored chunks): a range across the seam, an open end, a
    // suffix; `If-Range` naming another version answers the whole file; past the end is 416.
    let len = text.len();
    let part = |range: String, if_range: Option<&str>| {
        let mut req = client.get(format!("{attachments}/hello.txt")).bearer_auth(&write).header("range", range);
        if let Some(t) = if_range {
            req = req.header("if-range", t);
        }
        req.send()
    };
    for (range, from, to) in [
        ("bytes=262000-262300".to_string(), 262_000, 262_300),
        (format!("bytes={}-", len - 10), len - 10, len - 1),
        ("bytes=-5".to_string(), len - 5, len - 1),
        (format!("bytes=0-{}", len * 2), 0, len - 1),
    ] {
        let resp = part(range.clone(), Some(&tag)).await.unwrap();
        assert_eq!(resp.status(), 206, "{range}");
        assert_eq!(resp.headers()["content-range"], format!("bytes {from}-{to}/{len}").as_str(), "{range}");
        assert_eq!(resp.headers()["content-length"], (to - from + 1).to_string().as_str());
        assert_eq!(resp.bytes().await.unwrap().as_ref(), &text[from..=to], "{range}");
    }
    let changed = part("bytes=0-9".into(), Some("\"another-version\"")).await.unwrap();
    assert_eq!(changed.status(), 200, "If-Range naming another version: the whole file");
    assert_eq!(changed.bytes().await.unwrap().len(), len);
    let past = part(format!("bytes={len}-"), None).await.unwrap();
    assert_eq!(past.status(), 416);
    assert_eq!(past.headers()["content-range"], format!("bytes */{len}").as_str());
    assert_eq!(past.headers()["content-type"], "application/problem+json");
    assert_eq!(past.json::<Value>().await.unwrap()["code"], "range_not_satisfiable");
    let several = part("bytes=0-1,5-6".into(), None).await.unwrap();
    assert_eq!((several.status(), several.bytes().await.unwrap().len()), (reqwest::StatusCode::OK, len));

    // Refusals: the name is taken; a type not accepted; no file part; an unknown part.
    let taken = upload(body).await.unwrap();
    assert_eq!(taken.status(), 409);
    assert_eq!(taken.json::<Value>().await.unwrap()["code"], "name_taken");
    let html = upload(multipart(&[("file", Some(("x.html", "text/html")), b"<p>")])).await.unwrap();
    assert_eq!(html.status(), 415);
    let refused: Value = html.json().await.unwrap();
    assert_eq!((refused["field"].as_str(), refused["value"].as_str()), (Some("file"), Some("text/html")), "{refused}");
    let none = upload(multipart(&[("caption", None, b"no file")])).await.unwrap();
    assert_eq!(none.status(), 422);
    assert_eq!(none.json::<Value>().await.unwrap()["field"], "file");
    let unknown = upload(multipart(&[("colour", None, b"red")])).await.unwrap();
    assert_eq!(unknown.status(), 422);
    let json_body = client.post(&attachments).bearer_auth(&write).json(&json!({"file": "x"})).send().await.unwrap();
    assert_eq!(json_body.status(), 415, "a JSON body where multipart is declared");

    // A raw body: the file itself, under the name in the path; a second PUT replaces it.
    let png = [b"\x89PNG\r\n\x1a\n".as_slice(), &[7u8; 5000]].concat();
    let put = |body: Vec<u8>, media_type: &'static str| {
        client
            .put(format!("{attachments}/cover.png"))
            .bearer_auth(&write)
            .header("content-type", media_type)
            .body(body)
            .send()
    };
    let resp = put(png.clone(), "image/png").await.unwrap();
    let (status, cover) = (resp.status(), resp.json::<Value>().await.unwrap());
    assert_eq!(status, 200, "{cover}");
    assert_eq!((cover["name"].as_str(), cover["size"].as_u64()), (Some("cover.png"), Some(png.len() as u64)));
    let smaller = png[..100].to_vec();
    assert_eq!(put(smaller.clone(), "image/png").await.unwrap().status(), 200);
    let back = client.get(format!("{attachments}/cover.png")).bearer_auth(&write).send().await.unwrap();
    assert_eq!(back.bytes().await.unwrap().as_ref(), smaller.as_slice(), "replaced");
    assert_eq!(put(png.clone(), "image/gif").await.unwrap().status(), 415);
    // A declared length over the limit is refused before anything is stored.
    let huge = client
        .put(format!("{attachments}/big.png"))
        .bearer_auth(&write)
        .header("content-type", "image/png")
        .header("content-length", "104857601")
        .body(vec![0u8; 16])
        .send()
        .await;
    if let Ok(huge) = huge {
        assert_eq!(huge.status(), 413);
    }

    let listed: Value = client.get(&attachments).bearer_auth(&write).send().await.unwrap().json().await.unwrap();
    let names: Vec<&str> = listed.as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["cover.png", "hello.txt"]);

    // Another tenant reaches none of it, and cannot attach to the note.
    let other = s.token("someone-else", "notes:write");
    assert_eq!(client.get(format!("{attachments}/hello.txt")).bearer_auth(&other).send().await.unwrap().status(), 404);
    let foreign = client
        .put(format!("{attachments}/mine.png"))
        .bearer_auth(&other)
        .header("content-type", "image/png")
        .body(png.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 404);

    // Deleting an attachment, then the note, leaves no file behind.
    let gone = client.delete(format!("{attachments}/cover.png")).bearer_auth(&write).send().await.unwrap();
    assert_eq!(gone.status(), 204);
    assert_eq!(client.get(format!("{attachments}/cover.png")).bearer_auth(&write).send().await.unwrap().status(), 404);
    assert_eq!(client.delete(format!("{notes}/{id}")).bearer_auth(&write).send().await.unwrap().status(), 204);
    let pool = notes_server::pool(&s, database_url).await;
    let kept: i64 = {
        use sqlx::Row;
        sqlx::query("SELECT COUNT(*) FROM blobs WHERE tenant_id = $1 AND kept = 1")
            .bind(&tenant)
            .fetch_one(&pool)
            .await
            .unwrap()
            .get(0)
    };
    assert_eq!(kept, 0, "the note's files went with it");

    // The documents: a multipart body with the file part's types, a raw body per type.
    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let multipart = &doc["paths"]["/notes/{id}/attachments"]["post"]["requestBody"]["content"]["multipart/form-data"];
    assert_eq!(multipart["encoding"]["file"]["contentType"], "image/png, image/jpeg, application/pdf, text/plain");
    let raw = &doc["paths"]["/notes/{id}/attachments/{name}"]["put"]["requestBody"]["content"];
    assert_eq!(raw["image/png"]["schema"]["contentMediaType"], "image/png");
}

/// `capture_note` takes an HTML form's body: scalars, a list as repeated keys, checked as JSON
/// fields are.
async fn form(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let write = s.token(&format!("form-{}", uuid::Uuid::now_v7().simple()), "notes:write");
    let capture = s.url("/api/v1/notes/capture");
    let post = |body: &'static str, media_type: &'static str| {
        client.post(&capture).bearer_auth(&write).header("content-type", media_type).body(body).send()
    };
    let form = "application/x-www-form-urlencoded";
    let resp = post("title=Groceries+%26+more&tags=home&tags=food", form).await.unwrap();
    let (status, note) = (resp.status(), resp.json::<Value>().await.unwrap());
    assert_eq!(status, 201, "{note}");
    assert_eq!(note["title"], "Groceries & more");
    assert_eq!(note["tags"], json!(["food", "home"]));
    let bad = post("title=x&tags=Home", form).await.unwrap();
    assert_eq!(bad.status(), 422);
    assert_eq!(bad.json::<Value>().await.unwrap()["field"], "tags[0]");
    assert_eq!(post("title=x&colour=red", form).await.unwrap().status(), 422);
    assert_eq!(post("title=x&title=y", form).await.unwrap().status(), 422, "a single field given twice");
    assert_eq!(post("tags=home", form).await.unwrap().status(), 422, "title is required");
    assert_eq!(post("{\"title\": \"x\"}", "application/json").await.unwrap().status(), 415);
    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let content = &doc["paths"]["/notes/capture"]["post"]["requestBody"]["content"];
    assert!(content["application/x-www-form-urlencoded"].is_object(), "{content}");
}

on_both_backends!(uploads: files_are_attached_stored_and_downloaded_whole_on_sqlite, files_are_attached_stored_and_downloaded_whole_on_postgres, "notes attachments");

on_both_backends!(form: a_note_is_captured_from_a_form_on_sqlite, a_note_is_captured_from_a_form_on_postgres, "notes form capture");

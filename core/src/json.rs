//! The JSON of a tool call's input, read as far as validation needs: an object's members
//! in input order (duplicates kept), each value a string or the kind of value it is, and
//! everything nested checked and skipped however deep it goes. It accepts and refuses
//! the texts serde_json does but one: a number too large for a double is a number here
//! (as Python's `json` reads it), where serde_json refuses it; a tool refuses it either
//! way. Strings are read as serde_json reads them: as text (an unpaired surrogate
//! refused) where it kept them (the input, its properties' values, and the keys of an
//! object that is either), only checked to be well formed where it skipped them. Written
//! here because serde_json was a twentieth of the component for this alone; its tests
//! hold it to serde_json.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// A tool input: an object's members, or the kind of JSON value it is instead.
pub(crate) enum Input {
    Object(Vec<(String, Value)>),
    Other(&'static str),
}

/// A property's value: a string, or the kind of JSON value it is instead.
pub(crate) enum Value {
    String(String),
    Other(&'static str),
}

/// `text` read as a tool input, or what is wrong with it and where (`expected value at
/// line 1 column 3`).
pub(crate) fn parse(text: &str) -> Result<Input, String> {
    let mut reader = Reader { text, at: 0 };
    let input = match reader.value(Role::Input)? {
        Parsed::Object(members) => Input::Object(members),
        Parsed::Value(Value::String(_)) => Input::Other("string"),
        Parsed::Value(Value::Other(kind)) => Input::Other(kind),
    };
    reader.skip_whitespace();
    if reader.at < text.len() {
        return Err(reader.error("trailing characters"));
    }
    Ok(input)
}

/// `text` as a JSON string, as serde_json writes one: `"` and `\` escaped, control
/// characters as `\n`-style or `\u00XX` escapes, everything else as itself.
pub(crate) fn quote(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                out.push_str("\\u00");
                out.push(char::from(HEX[(c as usize) >> 4]));
                out.push(char::from(HEX[(c as usize) & 0xf]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Which value `Reader::value` reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The input itself, whose object's members are kept.
    Input,
    /// A member's value, which is kept if a string.
    Property,
}

/// A value read: an object whose members were kept, or a value.
enum Parsed {
    Object(Vec<(String, Value)>),
    Value(Value),
}

struct Reader<'t> {
    text: &'t str,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// `what` at the line and column where reading stopped (both from 1, the column in
    /// bytes: the byte looked at, or the one after a byte read), as serde_json counts
    /// them where it looked at the byte.
    fn error(&self, what: &str) -> String {
        let before = &self.text.as_bytes()[..self.at.min(self.text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = before.len() - line_start + 1;
        format!("{what} at line {line} column {column}")
    }

    /// The input, or one of its properties' values: a string is read as text, an
    /// object's members are kept if it is the input's, and anything nested is skipped.
    fn value(&mut self, role: Role) -> Result<Parsed, String> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'"') => {
                self.at += 1;
                Ok(Parsed::Value(Value::String(self.string(true)?)))
            }
            Some(b'{') => {
                self.at += 1;
                let members = self.object(role)?;
                Ok(match role {
                    Role::Input => Parsed::Object(members),
                    Role::Property => Parsed::Value(Value::Other("object")),
                })
            }
            _ => Ok(Parsed::Value(Value::Other(self.skip()?))),
        }
    }

    /// The members of an object whose `{` was read: the input's are kept, with their
    /// values read as properties; a property's object has its keys read as text (as
    /// serde_json reads them) and its values skipped.
    fn object(&mut self, role: Role) -> Result<Vec<(String, Value)>, String> {
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(members);
        }
        loop {
            self.skip_whitespace();
            let key = self.key(true)?;
            match role {
                Role::Input => {
                    let value = match self.value(Role::Property)? {
                        Parsed::Value(value) => value,
                        Parsed::Object(_) => Value::Other("object"),
                    };
                    members.push((key, value));
                }
                Role::Property => {
                    self.skip()?;
                }
            }
            self.skip_whitespace();
            match self.next() {
                Some(b',') => {}
                Some(b'}') => return Ok(members),
                None => return Err(self.error("EOF while parsing an object")),
                Some(_) => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    /// A key and its `:`, at the key's `"`; read as text if `text`.
    fn key(&mut self, text: bool) -> Result<String, String> {
        match self.next() {
            Some(b'"') => {}
            None => return Err(self.error("EOF while parsing an object")),
            Some(_) => return Err(self.error("key must be a string")),
        }
        let key = self.string(text)?;
        self.skip_whitespace();
        match self.next() {
            Some(b':') => Ok(key),
            None => Err(self.error("EOF while parsing an object")),
            Some(_) => Err(self.error("expected `:`")),
        }
    }

    /// One value skipped, however deeply it nests (without recursion, so no input can
    /// exhaust the stack), its strings only checked to be well formed; its kind.
    fn skip(&mut self) -> Result<&'static str, String> {
        // The closing bracket of each array and object the reader is inside.
        let mut closers: Vec<u8> = Vec::new();
        let mut kind = None;
        loop {
            self.skip_whitespace();
            let (this, done) = match self.peek() {
                None => return Err(self.error("EOF while parsing a value")),
                Some(b'"') => {
                    self.at += 1;
                    self.string(false)?;
                    ("string", true)
                }
                Some(open @ (b'{' | b'[')) => {
                    self.at += 1;
                    let (this, close) = match open {
                        b'{' => ("object", b'}'),
                        _ => ("array", b']'),
                    };
                    self.skip_whitespace();
                    if self.peek().is_none() && close == b']' {
                        return Err(self.error("EOF while parsing a list"));
                    }
                    let empty = self.peek() == Some(close);
                    if empty {
                        self.at += 1;
                    } else {
                        closers.push(close);
                        if close == b'}' {
                            self.key(false)?;
                        }
                    }
                    (this, empty)
                }
                Some(b't') => (self.word("true", "boolean")?, true),
                Some(b'f') => (self.word("false", "boolean")?, true),
                Some(b'n') => (self.word("null", "null")?, true),
                Some(b'-' | b'0'..=b'9') => (self.number()?, true),
                Some(_) => return Err(self.error("expected value")),
            };
            let kind = *kind.get_or_insert(this);
            if !done {
                continue;
            }
            // A value ended: close what it ended, up to the next value expected.
            loop {
                let Some(&close) = closers.last() else {
                    return Ok(kind);
                };
                self.skip_whitespace();
                match self.next() {
                    Some(b',') => {
                        if close == b'}' {
                            self.skip_whitespace();
                            self.key(false)?;
                        }
                        break;
                    }
                    Some(byte) if byte == close => {
                        closers.pop();
                    }
                    None if close == b'}' => return Err(self.error("EOF while parsing an object")),
                    None => return Err(self.error("EOF while parsing a list")),
                    Some(_) if close == b'}' => return Err(self.error("expected `,` or `}`")),
                    Some(_) => return Err(self.error("expected `,` or `]`")),
                }
            }
        }
    }

    fn word(&mut self, word: &str, kind: &'static str) -> Result<&'static str, String> {
        for expected in word.bytes() {
            match self.next() {
                Some(byte) if byte == expected => {}
                None => return Err(self.error("EOF while parsing a value")),
                Some(_) => return Err(self.error("expected ident")),
            }
        }
        Ok(kind)
    }

    /// A number, by RFC 8259's grammar: `-`? (`0` | [1-9][0-9]*) (`.` [0-9]+)?
    /// ([eE] [+-]? [0-9]+)?
    fn number(&mut self) -> Result<&'static str, String> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.next() {
            Some(b'0') => {}
            Some(b'1'..=b'9') => self.digits(),
            None => return Err(self.error("EOF while parsing a value")),
            Some(_) => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Ok("number")
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(b'0'..=b'9') => {
                self.digits();
                Ok(())
            }
            None => Err(self.error("EOF while parsing a value")),
            Some(_) => Err(self.error("invalid number")),
        }
    }

    /// The rest of a string whose `"` was read. With `text`, an escaped surrogate must
    /// be the first of a pair (the string is read as text); without, any four hex
    /// digits pass, and what the string holds is not kept.
    fn string(&mut self, text: bool) -> Result<String, String> {
        let mut out = String::new();
        loop {
            let start = self.at;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.at += 1;
            }
            if text {
                // Both ends are at ASCII bytes (or the end), so on character boundaries.
                out.push_str(&self.text[start..self.at]);
            }
            match self.next() {
                Some(b'"') => return Ok(out),
                Some(b'\\') => {}
                None => return Err(self.error("EOF while parsing a string")),
                Some(_) => {
                    return Err(self.error(
                        "control character (\\u0000-\\u001F) found while parsing a string",
                    ));
                }
            }
            let escaped = match self.next() {
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => {
                    let unit = self.hex()?;
                    if !text {
                        continue;
                    }
                    self.code_point(unit)?
                }
                None => return Err(self.error("EOF while parsing a string")),
                Some(_) => return Err(self.error("invalid escape")),
            };
            if text {
                out.push(escaped);
            }
        }
    }

    /// The character a `\u` escape of `unit` stands for, reading the second half of a
    /// surrogate pair.
    fn code_point(&mut self, unit: u32) -> Result<char, String> {
        let lone = |reader: &Self| Err(reader.error("lone leading surrogate in hex escape"));
        match unit {
            0xDC00..=0xDFFF => lone(self),
            0xD800..=0xDBFF => {
                if self.next() != Some(b'\\') || self.next() != Some(b'u') {
                    return Err(self.error("unexpected end of hex escape"));
                }
                let low = self.hex()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return lone(self);
                }
                let scalar = 0x1_0000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                char::from_u32(scalar).map_or_else(|| lone(self), Ok)
            }
            _ => char::from_u32(unit).map_or_else(|| lone(self), Ok),
        }
    }

    /// Four hex digits.
    fn hex(&mut self) -> Result<u32, String> {
        let mut value = 0;
        for _ in 0..4 {
            let digit = match self.next() {
                Some(byte) => char::from(byte).to_digit(16),
                None => return Err(self.error("EOF while parsing a string")),
            };
            match digit {
                Some(digit) => value = value * 16 + digit,
                None => return Err(self.error("invalid escape")),
            }
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    //! The reader against serde_json, which the component read tool inputs with before:
    //! the same texts accepted, the same members and kinds read from them.

    use super::*;
    use alloc::borrow::ToOwned;
    use alloc::string::ToString;
    use alloc::vec;
    use core::fmt;
    use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

    /// What a text is read as: the input's members (each with its value if a string, its
    /// kind if not) if an object, and its kind.
    type Read = (
        Option<Vec<(String, Result<String, &'static str>)>>,
        &'static str,
    );

    /// What serde_json reads `text` as, with the visitor the component used; `None`
    /// where it refuses the text.
    fn oracle(text: &str) -> Option<Read> {
        enum Json {
            String(String),
            Object(Vec<(String, Json)>),
            Other(&'static str),
        }
        struct KindVisitor {
            members: bool,
        }
        impl<'de> Visitor<'de> for KindVisitor {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Json, E> {
                Ok(Json::Other("boolean"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Json, E> {
                Ok(Json::Other("number"))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Json, E> {
                Ok(Json::Other("number"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Json, E> {
                Ok(Json::Other("number"))
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Other("null"))
            }
            fn visit_str<E>(self, text: &str) -> Result<Json, E> {
                Ok(Json::String(text.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Json::Other("array"))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                if !self.members {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    return Ok(Json::Other("object"));
                }
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Json>()? {
                    members.push(member);
                }
                Ok(Json::Object(members))
            }
        }
        impl<'de> Deserialize<'de> for Json {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any(KindVisitor { members: false })
            }
        }
        struct Top(Json);
        impl<'de> Deserialize<'de> for Top {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Ok(Top(
                    deserializer.deserialize_any(KindVisitor { members: true })?
                ))
            }
        }
        let input = match serde_json::from_str::<Top>(text).ok()?.0 {
            Json::Object(members) => Input::Object(
                members
                    .into_iter()
                    .map(|(key, value)| match value {
                        Json::String(text) => (key, Value::String(text)),
                        Json::Other(kind) => (key, Value::Other(kind)),
                        // A property's object is read by the visitor without its members.
                        Json::Object(_) => unreachable!("{text:?}: a property kept as an object"),
                    })
                    .collect(),
            ),
            Json::String(_) => Input::Other("string"),
            Json::Other(kind) => Input::Other(kind),
        };
        Some(comparable(input))
    }

    /// What `parse` reads `text` as, in the oracle's terms.
    fn ours(text: &str) -> Option<Read> {
        parse(text).ok().map(comparable)
    }

    /// An input as the two readers are compared.
    fn comparable(input: Input) -> Read {
        match input {
            Input::Object(members) => {
                let members = members.into_iter().map(|(key, value)| match value {
                    Value::String(text) => (key, Ok(text)),
                    Value::Other(kind) => (key, Err(kind)),
                });
                (Some(members.collect()), "object")
            }
            Input::Other(kind) => (None, kind),
        }
    }

    fn same(text: &str) {
        let theirs = oracle(text);
        let ours = ours(text);
        // The one difference, documented above: a number beyond a double's range.
        if theirs.is_none() && ours.is_some() {
            let error = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
            assert!(
                error.to_string().starts_with("number out of range"),
                "{text:?}: serde_json refuses it ({error}), parse accepts it"
            );
            return;
        }
        assert_eq!(ours, theirs, "{text:?}");
        if ours.is_none() {
            let message = parse(text).err().unwrap();
            assert!(message.contains(" at line "), "{text:?}: {message}");
        }
    }

    /// Texts that reach every path: each kind at each level, escapes, surrogates paired
    /// and not, numbers in every shape, whitespace, nesting at the limit and past it.
    fn samples() -> Vec<String> {
        let mut texts: Vec<String> = [
            r#"{"file": "MEMORY.md", "entry": "- a fact"}"#,
            r#"{"file":"USER.md","old":"a","new":"b"}"#,
            r#" { "a" : 1 , "b" : [ 1 , { "c" : null } ] , "d" : { } } "#,
            r#"{"a":"x","a":"y"}"#,
            r#"{"entry":"tab\there \"quoted\" back\\slash \/ \b\f\n\r \u00e9 \u20AC \ud83d\ude00"}"#,
            r#"{"k":"\ud83d"}"#,
            r#"{"k":"\ude00"}"#,
            r#"{"k":"\ud83d\u0041"}"#,
            r#"{"k":"\ud83dx"}"#,
            r#"{"k":"\ud83d\n"}"#,
            r#"{"k":["\ud83d"]}"#,
            r#"{"k":{"\ude00":"\ud83d"}}"#,
            r#"{"\ud83d":1}"#,
            r#"["\ud83d", "\ude00"]"#,
            r#""\ud83d""#,
            r#""plain""#,
            r#"{"k":"\u12"}"#,
            r#"{"k":"\u12G4"}"#,
            r#"{"k":"\x"}"#,
            "{\"k\":\"a\u{1}b\"}",
            "{\"k\":\"a\u{7f}b\u{e9}\u{1F600}\"}",
            "{\"k\":[\"\u{1f}\"]}",
            r#"{"a":true,"b":false,"c":null,"d":-0,"e":0.5,"f":1e5,"g":-1.25E-3,"h":12345678901234567890123}"#,
            r#"{"n":01}"#,
            r#"{"n":-}"#,
            r#"{"n":1.}"#,
            r#"{"n":.5}"#,
            r#"{"n":1e}"#,
            r#"{"n":1e+}"#,
            r#"{"n":+1}"#,
            r#"{"n":1e400}"#,
            r#"[1e400]"#,
            r#"{"n":tru}"#,
            r#"{"n":nul}"#,
            r#"{"n":NaN}"#,
            r#"{"n":Infinity}"#,
            r#"{"a":1,}"#,
            r#"[1,]"#,
            r#"{,}"#,
            r#"{"a" 1}"#,
            r#"{"a":1 "b":2}"#,
            r#"{1:2}"#,
            r#"{'a':1}"#,
            r#"{"a":1}}"#,
            r#"{"a":1} x"#,
            "{\"a\":1}\n\t\r ",
            "\u{feff}{}",
            "",
            " ",
            "null",
            "true",
            "42",
            "[]",
            "[1, \"two\", [3], {\"four\": 4}]",
            "{}",
            "{\"a\":[}",
            "{\"a\":{]}",
        ]
        .iter()
        .map(|text| text.to_string())
        .collect();
        for depth in [1, 2, 3, 127, 128, 129] {
            texts.push("[".repeat(depth) + &"]".repeat(depth));
            texts.push(format!(
                "{{\"a\":{}1{}}}",
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            ));
            texts.push("{\"a\":".repeat(depth) + "1" + &"}".repeat(depth));
        }
        texts
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in samples() {
            same(&text);
        }
    }

    /// Every sample cut short at every character, and with each of JSON's structural
    /// characters put in at every place: texts that are malformed in every way a byte
    /// can make them.
    #[test]
    fn refuses_what_serde_json_refuses() {
        for text in samples() {
            let boundaries = text.char_indices().map(|(at, _)| at);
            for at in boundaries.clone() {
                same(&text[..at]);
                for inserted in ["\"", "\\", "{", "}", "[", "]", ",", ":", " ", "0", "-", "e"] {
                    same(&format!("{}{inserted}{}", &text[..at], &text[at..]));
                }
            }
        }
    }

    /// Nesting is skipped without recursion: a million levels neither exhaust the stack
    /// nor stop a well-formed value being read.
    #[test]
    fn skips_any_depth() {
        let depth = 1_000_000;
        let deep = "[".repeat(depth) + &"]".repeat(depth);
        assert!(matches!(parse(&deep), Ok(Input::Other("array"))));
        let member = format!("{{\"entry\":{{\"a\":{deep}}}}}");
        assert!(matches!(parse(&member), Ok(Input::Object(m)) if m.len() == 1));
        let open = "{\"a\":".repeat(depth);
        let message = parse(&open).err().unwrap();
        assert!(
            message.starts_with("EOF while parsing a value"),
            "{message}"
        );
    }

    #[test]
    fn says_where_it_stopped() {
        let message = parse("{\n  \"a\": ?}").err().unwrap();
        assert_eq!(message, "expected value at line 2 column 8");
        let message = parse("{\"a\":1} x").err().unwrap();
        assert_eq!(message, "trailing characters at line 1 column 9");
    }

    #[test]
    fn quotes_as_serde_json_does() {
        let mut texts: Vec<String> = (0..0x80u32)
            .chain([0xe9, 0x2028, 0xfeff, 0x1f600])
            .map(|c| char::from_u32(c).unwrap().to_string())
            .collect();
        texts.push("MEMORY.md \"quoted\" \\ back\nslash".to_owned());
        texts.push(String::new());
        for text in texts {
            assert_eq!(
                quote(&text),
                serde_json::to_string(&text).unwrap(),
                "{text:?}"
            );
        }
        assert_eq!(vec![quote("a")], vec!["\"a\"".to_owned()]);
    }
}

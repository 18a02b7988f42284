//! The user message of a signature's input, written straight from its `Serialize`: each field
//! on its own lines, `name: value`, text as it is and the rest as compact JSON, without the
//! map and the copies of every key and value that reading the input into a `serde_json::Value`
//! first takes (a run's first message, every run). The text is that of the `Value` way but
//! where a `Value` changes what it holds: an `f32` is written as itself (`0.1`, not the
//! `0.10000000149011612` a `Value`'s `f64` says), a raw JSON value as it was written, an
//! integer past 64 bits at all (a `Value` refuses it), and two fields serde gives one name
//! both (a `Value` keeps the last).

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible, SerializeStruct};
use serde_json::Value;

/// The user message of `input`: field by field where it serializes as a struct, else (a map,
/// a struct with flattened fields) through a `Value`.
///
/// # Errors
/// Why `input` has no message: it does not serialize, or not to an object.
pub(crate) fn user_message<T: Serialize + ?Sized>(input: &T) -> Result<String, String> {
    match struct_fields(input) {
        Some(message) => Ok(message),
        None => value_fields(input),
    }
}

/// The user message of `input`, where it serializes as a struct; `None` for anything else.
fn struct_fields<T: Serialize + ?Sized>(input: &T) -> Option<String> {
    input.serialize(Fields).ok()
}

/// The user message of `input` the general way: read into a `Value`, whose members are
/// written out.
fn value_fields<T: Serialize + ?Sized>(input: &T) -> Result<String, String> {
    let value = serde_json::to_value(input).map_err(|e| e.to_string())?;
    let Value::Object(fields) = value else {
        return Err("the input must serialize to an object".to_owned());
    };
    let mut out = String::new();
    for (name, value) in fields {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&name);
        out.push_str(": ");
        match value {
            Value::String(text) => out.push_str(&text),
            other => out.push_str(&other.to_string()),
        }
    }
    Ok(out)
}

/// Not a struct, or a field that could not be written: the general way decides.
#[derive(Debug)]
pub(crate) struct Unwritten;

impl fmt::Display for Unwritten {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not written field by field")
    }
}

impl std::error::Error for Unwritten {}

impl ser::Error for Unwritten {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Unwritten
    }
}

/// Writes a struct's fields.
struct Fields;

/// The message so far.
struct Lines(String);

impl SerializeStruct for Lines {
    type Ok = String;
    type Error = Unwritten;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &V,
    ) -> Result<(), Unwritten> {
        if !self.0.is_empty() {
            self.0.push_str("\n\n");
        }
        self.0.push_str(name);
        self.0.push_str(": ");
        match value.serialize(Text(&mut self.0)) {
            Ok(()) => {}
            Err(Unwritten) => {
                let json = serde_json::to_string(value).map_err(|_| Unwritten)?;
                self.0.push_str(&json);
            }
        }
        Ok(())
    }

    fn end(self) -> Result<String, Unwritten> {
        Ok(self.0)
    }
}

/// Methods that answer [`Unwritten`], each argument ignored.
macro_rules! refuse {
    ($($method:ident($($ty:ty),*)),* $(,)?) => {$(
        fn $method(self, $(_: $ty),*) -> Result<Self::Ok, Self::Error> {
            Err(Unwritten)
        }
    )*};
}

/// The scalars neither serializer takes as they are, and every compound shape but a
/// struct's (`Self::Serialize*` of each is `Impossible`).
macro_rules! refuse_shared {
    () => {
        refuse!(
            serialize_bool(bool),
            serialize_i8(i8),
            serialize_i16(i16),
            serialize_i32(i32),
            serialize_i64(i64),
            serialize_i128(i128),
            serialize_u8(u8),
            serialize_u16(u16),
            serialize_u32(u32),
            serialize_u64(u64),
            serialize_u128(u128),
            serialize_f32(f32),
            serialize_f64(f64),
            serialize_bytes(&[u8]),
            serialize_none(),
            serialize_unit(),
            serialize_unit_struct(&'static str),
        );

        fn serialize_newtype_variant<V: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &V,
        ) -> Result<Self::Ok, Unwritten> {
            Err(Unwritten)
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unwritten> {
            Err(Unwritten)
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unwritten> {
            Err(Unwritten)
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, Unwritten> {
            Err(Unwritten)
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Unwritten> {
            Err(Unwritten)
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unwritten> {
            Err(Unwritten)
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Unwritten> {
            Err(Unwritten)
        }
    };
}

/// Writes a struct's fields; refuses every other shape.
impl ser::Serializer for Fields {
    type Ok = String;
    type Error = Unwritten;
    type SerializeSeq = Impossible<String, Unwritten>;
    type SerializeTuple = Impossible<String, Unwritten>;
    type SerializeTupleStruct = Impossible<String, Unwritten>;
    type SerializeTupleVariant = Impossible<String, Unwritten>;
    type SerializeMap = Impossible<String, Unwritten>;
    type SerializeStruct = Lines;
    type SerializeStructVariant = Impossible<String, Unwritten>;

    refuse_shared!();
    refuse!(
        serialize_char(char),
        serialize_str(&str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<V: Serialize + ?Sized>(self, _: &V) -> Result<String, Unwritten> {
        Err(Unwritten)
    }
    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &V,
    ) -> Result<String, Unwritten> {
        // A newtype around a struct is that struct, as `serde_json` writes it.
        value.serialize(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Lines, Unwritten> {
        Ok(Lines(String::new()))
    }
}

/// Writes a field's value as text where `serde_json` would write it as a JSON string (a
/// string, a char, a unit variant's name, through `Some` and newtypes) and refuses anything
/// else before writing any of it, which is then written as JSON.
struct Text<'o>(&'o mut String);

impl ser::Serializer for Text<'_> {
    type Ok = ();
    type Error = Unwritten;
    type SerializeSeq = Impossible<(), Unwritten>;
    type SerializeTuple = Impossible<(), Unwritten>;
    type SerializeTupleStruct = Impossible<(), Unwritten>;
    type SerializeTupleVariant = Impossible<(), Unwritten>;
    type SerializeMap = Impossible<(), Unwritten>;
    type SerializeStruct = Impossible<(), Unwritten>;
    type SerializeStructVariant = Impossible<(), Unwritten>;

    refuse_shared!();

    fn serialize_str(self, text: &str) -> Result<(), Unwritten> {
        self.0.push_str(text);
        Ok(())
    }
    fn serialize_char(self, c: char) -> Result<(), Unwritten> {
        self.0.push(c);
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Unwritten> {
        self.0.push_str(variant);
        Ok(())
    }
    fn serialize_some<V: Serialize + ?Sized>(self, value: &V) -> Result<(), Unwritten> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &V,
    ) -> Result<(), Unwritten> {
        value.serialize(self)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Unwritten> {
        Err(Unwritten)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::{struct_fields, user_message, value_fields};

    /// The message the general way writes, where it writes one.
    fn through_value<T: Serialize>(input: &T) -> Option<String> {
        value_fields(input).ok()
    }

    #[derive(Serialize)]
    enum Mood {
        Calm,
        #[serde(rename = "on edge")]
        Edgy,
    }

    #[derive(Serialize)]
    struct Email(String);

    #[derive(Serialize)]
    struct Inner {
        depth: u8,
        label: Option<String>,
    }

    #[derive(Serialize)]
    enum Shape {
        Circle { r: f64 },
        Named(String),
    }

    #[derive(Serialize)]
    struct Everything {
        question: String,
        #[serde(rename = "the mood")]
        mood: Mood,
        other: Mood,
        email: Email,
        initial: char,
        count: i64,
        big: u64,
        ratio: f64,
        nothing: f64,
        flag: bool,
        missing: Option<String>,
        present: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        inner: Inner,
        list: Vec<&'static str>,
        map: BTreeMap<u32, &'static str>,
        shape: Shape,
        named: Shape,
        unit: (),
        quoted: String,
    }

    #[test]
    fn a_struct_is_written_as_the_general_way_writes_it() {
        let input = Everything {
            question: "What is\n(2 + 3) x 4?".into(),
            mood: Mood::Calm,
            other: Mood::Edgy,
            email: Email("ada@example.com".into()),
            initial: 'é',
            count: -7,
            big: u64::MAX,
            ratio: 0.1,
            nothing: f64::NAN,
            flag: true,
            missing: None,
            present: Some("here".into()),
            skipped: None,
            inner: Inner {
                depth: 2,
                label: None,
            },
            list: vec!["a", "b\"c"],
            map: BTreeMap::from([(1, "one"), (20, "twenty")]),
            shape: Shape::Circle { r: 1.5 },
            named: Shape::Named("ring".into()),
            unit: (),
            quoted: "\"already\" quoted".into(),
        };
        let direct = struct_fields(&input).unwrap();
        assert_eq!(Some(direct.clone()), through_value(&input));
        assert!(direct.starts_with("question: What is\n(2 + 3) x 4?\n\nthe mood: Calm\n\n"));
        assert!(direct.contains("\n\nmissing: null\n\npresent: here\n\ninner: {"));
        assert!(!direct.contains("skipped"));
    }

    #[test]
    fn an_f32_is_written_as_itself() {
        #[derive(Serialize)]
        struct Narrow {
            ratio: f32,
            list: Vec<f32>,
        }
        let input = Narrow {
            ratio: 0.1,
            list: vec![0.5, 0.1],
        };
        assert_eq!(
            struct_fields(&input).as_deref(),
            Some("ratio: 0.1\n\nlist: [0.5,0.1]")
        );
        assert_eq!(
            through_value(&input).as_deref(),
            Some("ratio: 0.10000000149011612\n\nlist: [0.5,0.10000000149011612]")
        );
    }

    #[test]
    fn a_number_a_value_cannot_hold_is_written_all_the_same() {
        #[derive(Serialize)]
        struct Wide {
            big: u128,
        }
        // `serde_json::Value` holds no integer past 64 bits: the general way refuses it.
        assert_eq!(through_value(&Wide { big: u128::MAX }), None);
        assert_eq!(
            struct_fields(&Wide { big: u128::MAX }).as_deref(),
            Some("big: 340282366920938463463374607431768211455")
        );
    }

    #[test]
    fn what_is_not_a_struct_is_left_to_the_general_way() {
        #[derive(Serialize)]
        struct Base {
            a: u8,
        }
        #[derive(Serialize)]
        struct Flat {
            #[serde(flatten)]
            base: Base,
            b: u8,
        }
        #[derive(Serialize)]
        struct Wrapper(Inner);
        assert_eq!(
            struct_fields(&Flat {
                base: Base { a: 1 },
                b: 2
            }),
            None
        );
        assert_eq!(struct_fields(&BTreeMap::from([("a", 1)])), None);
        assert_eq!(struct_fields(&"text"), None);
        assert_eq!(struct_fields(&[1, 2]), None);
        // ...which writes them through a `Value`, or says why it cannot.
        let flat = Flat {
            base: Base { a: 1 },
            b: 2,
        };
        assert_eq!(user_message(&flat).as_deref(), Ok("a: 1\n\nb: 2"));
        assert!(user_message(&"text").is_err());
        // A newtype around a struct is that struct.
        let wrapped = Wrapper(Inner {
            depth: 1,
            label: Some("x".into()),
        });
        assert_eq!(struct_fields(&wrapped), through_value(&wrapped));
        assert_eq!(
            struct_fields(&wrapped).as_deref(),
            Some("depth: 1\n\nlabel: x")
        );
    }
}

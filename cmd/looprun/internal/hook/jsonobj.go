package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// object is a JSON object whose members keep the order they came in, so
// that a settings file looprun changes keeps the person's order; each
// value is kept as it came.
type object []member

// member is one key and its value.
type member struct {
	key   string
	value json.RawMessage
}

// errNotObject is JSON that is not an object.
var errNotObject = errors.New("not a JSON object")

// parseObject reads a JSON object. A key given twice keeps its last
// value, as encoding/json reads it, in its first place.
func parseObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var o object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("a key that is no string: %v", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(key, v)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the object")
	}
	return o, nil
}

// UnmarshalJSON reads a JSON object, as parseObject does.
func (o *object) UnmarshalJSON(data []byte) error {
	p, err := parseObject(data)
	if err != nil {
		return err
	}
	*o = p
	return nil
}

// get returns the value of key.
func (o object) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set gives key the value, in its place, or last when it is new.
func (o *object) set(key string, value json.RawMessage) {
	for i, m := range *o {
		if m.key == key {
			(*o)[i].value = value
			return
		}
	}
	*o = append(*o, member{key, value})
}

// remove removes key.
func (o *object) remove(key string) {
	for i, m := range *o {
		if m.key == key {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

// MarshalJSON writes the object, its members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// raw returns v marshalled; v is always one looprun made.
func raw(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic("hook: " + err.Error())
	}
	return data
}

package packaging

import (
	"fmt"
	"reflect"
	"strings"
)

// unprintable names the first string in v (walked by its JSON field names)
// holding a character YAML cannot carry, which would fail the CSV and the
// chart later with no field named.
func unprintable(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.String:
		if i := strings.IndexFunc(v.String(), func(r rune) bool { return !yamlPrintable(r) }); i >= 0 {
			return fmt.Errorf("%s holds the unprintable character %q at byte %d: remove it", path, v.String()[i:i+1], i)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if err := unprintable(v.Field(i), join(path, name)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := unprintable(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := fmt.Sprint(iter.Key().Interface())
			if err := unprintable(iter.Key(), join(path, "<key>")); err != nil {
				return err
			}
			if err := unprintable(iter.Value(), join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			return unprintable(v.Elem(), path)
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlPrintable is YAML 1.1's printable set, which the emitter enforces.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7e:
		return true
	case r >= 0xa0 && r <= 0xd7ff:
		return true
	case r >= 0xe000 && r <= 0xfffd:
		return r != 0xfeff
	case r >= 0x10000 && r <= 0x10ffff:
		return true
	}
	return false
}

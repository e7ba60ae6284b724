package packaging

import "reflect"

// layerConfig fills what high leaves unset from each lower layer in turn:
// maps merge key by key (the higher layer wins), structs field by field,
// and any other field is taken whole when the higher one is zero.
func layerConfig(high Config, lower ...Config) Config {
	for _, low := range lower {
		layer(reflect.ValueOf(&high).Elem(), reflect.ValueOf(low))
	}
	return high
}

func layer(high, low reflect.Value) {
	switch high.Kind() {
	case reflect.Struct:
		for i := range high.NumField() {
			layer(high.Field(i), low.Field(i))
		}
	case reflect.Map:
		if low.Len() == 0 {
			return
		}
		if high.IsNil() {
			high.Set(reflect.MakeMap(high.Type()))
		}
		for _, k := range low.MapKeys() {
			if !high.MapIndex(k).IsValid() {
				high.SetMapIndex(k, low.MapIndex(k))
			}
		}
	default:
		if high.IsZero() {
			high.Set(low)
		}
	}
}

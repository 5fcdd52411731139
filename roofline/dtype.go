package roofline

// DType names a precision in the settings (weights, kv_cache_dtype,
// act_dtype): a name LookupPrecision resolves, as written (aliases and
// case kept), or "" for the setting's default. Its text form is the name;
// UnmarshalText accepts only names the precision catalog resolves, and "".
type DType string

// Validate returns LookupPrecision's *UnknownPrecisionError when d is
// neither "" nor a name the precision catalog resolves.
func (d DType) Validate() error {
	if d == "" {
		return nil
	}
	_, err := LookupPrecision(string(d))
	return err
}

// ParseDType returns the precision name name ("" is the zero DType), or an
// *UnknownPrecisionError.
func ParseDType(name string) (DType, error) {
	d := DType(name)
	if err := d.Validate(); err != nil {
		return "", err
	}
	return d, nil
}

// DTypes lists the catalog's precision names, in catalog order, as a form
// offers them (aliases and group-quantised integers are accepted besides).
func DTypes() []string { return precisionNames() }

// MarshalText implements encoding.TextMarshaler: the name as written.
func (d DType) MarshalText() ([]byte, error) { return []byte(d), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDType.
func (d *DType) UnmarshalText(b []byte) error {
	v, err := ParseDType(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

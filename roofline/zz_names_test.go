package roofline
import ("testing";"fmt";"github.com/roofsim/roofsim/model";"github.com/roofsim/roofsim/hardware")
func TestNamesTmp(t *testing.T){ fmt.Println(model.Names()); fmt.Println(hardware.Names()) }

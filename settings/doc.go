// Package settings declares the deployment settings: Deployment, one struct whose leaf
// fields are every setting of the deployment a workload is served by (model, GPU,
// parallelism, precisions, engine knobs, replicas), each with its key, help, default
// (DefaultDeployment) and checks (Deployment.Validate), and the reflection over those
// fields (SettingsOf, LookupSetting, Setting.Parse) that the command line, a sweep grid
// and the web form read.
//
// Reading order: deployment.go (the struct, its defaults and checks), settings.go (the
// keys), duration.go (the duration setting type).
//
// A setting whose values are names of a fixed vocabulary takes the type of the package
// that gives the names meaning (routing.Router, roofline.DType, roofline.MoEKernel,
// engine.Engine); that type parses, lists and checks them. The package sits below
// workload, which embeds Deployment in its Spec, and above those vocabularies' owners.
package settings

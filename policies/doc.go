// Package policies is the home of the data plane's route policies: small
// packages, one per policy, each with its configuration, its validation and
// an exchange.Handler constructor that ramjetd calls once per configuration
// load. The order in which ramjetd chains them is documented where the chain
// is built (dataplane/daemon).
package policies

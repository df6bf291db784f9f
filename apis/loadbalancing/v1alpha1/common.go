package v1alpha1

// MaxDescriptionLength leaves room in a description for the ownership
// marker the provider appends (the marker proves which resource made the
// object: monitors have no name, and names are not proof).
const MaxDescriptionLength = 200

// TunnelOriginSuffix is what a tunnel's ID becomes an origin address with:
// <tunnel ID>.cfargotunnel.com, which only pools of the tunnel's own
// account can use.
const TunnelOriginSuffix = ".cfargotunnel.com"

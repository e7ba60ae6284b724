// Package ocilayer writes reproducible tar archives and OCI image layers
// from files held in memory: fixed owner and modification time, parent
// directories first, files in the order given. Bundle, catalog and
// manager images and chart archives are built with it, so the same input
// always gives the same digest.
package ocilayer

package report

import "github.com/parscope/parscope/analysis/pca"

// PCAComponents is the number of principal components the report's pca
// analysis keeps.
const PCAComponents = pca.DefaultComponents

"""Neural-network operators: activations, normalization, convolution, pooling, losses."""

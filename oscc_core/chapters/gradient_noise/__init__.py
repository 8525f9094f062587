"""Chapter 3, gradient noise: how return covariance becomes noise in the policy update at one Leduc root.

For the four coupling arms and OSCC-Select it computes the gradient-noise
trace N = sum_I w(I) tr(G(I) Sigma(I) G(I)^T) (chips^2 per logit^2, exact and
estimated, with paired-bootstrap intervals), checks Proposition 3, follows
the noise into the realised clipped-surrogate update (update noise U, same
units; return, gradient and update ratios against independent sampling,
unitless), studies clipping, certifies OSCC-Select per own-card stratum,
compares the arms at a matched budget of physical draws, runs a scalar
clipped-surrogate screen (change of P(Call), a probability) and tabulates
exact ratios for several constructions.  The paper's relations (orderings of
the arms) are resolved by the paired bootstrap (`relations`); the settings of
the paper's runs get a status (`paper_settings`); `findings` writes the
chapter's result box.
"""

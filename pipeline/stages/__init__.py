"""The stages of a job: what each sends to its role's server and what it does with the answer."""

let placeholder = 0

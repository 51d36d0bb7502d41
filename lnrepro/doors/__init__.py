"""doors"""

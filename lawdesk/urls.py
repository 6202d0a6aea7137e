from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from matters.admin import own_password_change

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/password_change/", own_password_change, name="admin_password_change"),
    path("admin/", admin.site.urls),
    path("", include("pipeline.urls")),
    path("", include("matters.urls")),
]
